package dev.warden.plugin.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SpoolTest {
    @TempDir
    Path dir;

    private static Batch batch(RecordKind kind, int count, int bytes) {
        byte[] body = new byte[bytes];
        new Random(bytes).nextBytes(body);
        return new Batch(kind, count, body);
    }

    @Test
    void keepsBatchesAcrossARestartInOrder() throws Exception {
        TestSupport.CapturedLog log = new TestSupport.CapturedLog("spool");
        Spool spool = new Spool(dir, 4L << 20, log.logger);
        Batch a = batch(RecordKind.CHAT, 3, 100);
        Batch b = batch(RecordKind.SESSION, 2, 50);
        spool.append(a);
        spool.append(b);
        Files.writeString(dir.resolve("0000000000000099-chat-1.json.gz.tmp"), "half-written");

        Spool reopened = new Spool(dir, 4L << 20, log.logger);
        assertEquals(2, reopened.batches());
        assertEquals(5, reopened.records());
        List<Spool.Entry> entries = reopened.oldest(10);
        assertEquals(RecordKind.CHAT, entries.get(0).kind());
        assertArrayEquals(a.gzipBody(), reopened.read(entries.get(0)));
        assertEquals(RecordKind.SESSION, entries.get(1).kind());
        assertFalse(Files.exists(dir.resolve("0000000000000099-chat-1.json.gz.tmp")), "a torn write is removed");

        reopened.remove(entries.get(0));
        Spool again = new Spool(dir, 4L << 20, log.logger);
        assertEquals(1, again.batches());
        // New batches go after the kept ones.
        again.append(batch(RecordKind.CHAT, 1, 10));
        assertEquals(RecordKind.SESSION, again.oldest(1).get(0).kind());
    }

    @Test
    void whenFullHeartbeatsGoFirstThenTheOldest() throws Exception {
        TestSupport.CapturedLog log = new TestSupport.CapturedLog("spool");
        long max = 2L << 20; // the smallest bound
        Spool spool = new Spool(dir, max, log.logger);
        int size = 400_000;
        spool.append(batch(RecordKind.CHAT, 10, size)); // oldest chat
        spool.append(batch(RecordKind.HEARTBEAT, 1, size));
        spool.append(batch(RecordKind.SESSION, 20, size));
        spool.append(batch(RecordKind.HEARTBEAT, 1, size));
        spool.append(batch(RecordKind.CHAT, 30, size)); // 2.0 MB so far: full
        assertEquals(5, spool.batches());

        spool.append(batch(RecordKind.CHAT, 40, size)); // needs one out: the oldest heartbeat
        assertEquals(List.of(RecordKind.CHAT, RecordKind.SESSION, RecordKind.HEARTBEAT, RecordKind.CHAT, RecordKind.CHAT),
                spool.oldest(10).stream().map(Spool.Entry::kind).toList());
        assertEquals(1, spool.droppedRecords());

        spool.append(batch(RecordKind.CHAT, 50, 2 * size)); // two out: the last heartbeat, then the oldest chat
        assertEquals(List.of(RecordKind.SESSION, RecordKind.CHAT, RecordKind.CHAT, RecordKind.CHAT),
                spool.oldest(10).stream().map(Spool.Entry::kind).toList());
        assertEquals(1 + 1 + 10, spool.droppedRecords());
        assertTrue(spool.bytes() <= max);
        assertTrue(log.all().contains("spool full"), log.all());
        try (var files = Files.list(dir)) {
            assertEquals(4, files.count(), "dropped batches are deleted from disk");
        }
    }
}
