package dev.warden.plugin.core;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The bounded on-disk spool: every batch is written here before it is sent and deleted once the
 * service has answered for it, so what could not be sent survives outages and restarts (a resend
 * is harmless: every record carries its id). One file per batch,
 * {@code <sequence>-<kind>-<count>.json.gz}, written to a temporary file and renamed.
 *
 * <p>When full ({@code maxBytes}), the oldest heartbeats go first (a newer one says more), then
 * the oldest batches of any kind; what is dropped is counted and shown by {@code /warden status}.
 * When the disk refuses a write, the batch is kept in memory under the same bound.
 *
 * <p>Used only by the delivery thread.
 */
public final class Spool {
    /** A spooled batch; {@code data} is set when it lives in memory only. */
    public record Entry(long seq, RecordKind kind, int count, long bytes, Path file, byte[] data) {}

    private final Path dir;
    private final long maxBytes;
    private final Logger logger;
    private final TreeMap<Long, Entry> entries = new TreeMap<>();
    private long totalBytes;
    private long nextSeq;
    private long droppedRecords;

    public Spool(Path dir, long maxBytes, Logger logger) throws IOException {
        this.dir = dir;
        this.maxBytes = Math.max(maxBytes, 2L * 1024 * 1024);
        this.logger = logger;
        Files.createDirectories(dir);
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
            for (Path file : files) {
                String name = file.getFileName().toString();
                if (name.endsWith(".tmp")) {
                    Files.deleteIfExists(file);
                    continue;
                }
                Entry entry = parse(file, name);
                if (entry == null) {
                    logger.warning("spool: ignoring unknown file " + name);
                    continue;
                }
                entries.put(entry.seq(), entry);
                totalBytes += entry.bytes();
                nextSeq = Math.max(nextSeq, entry.seq() + 1);
            }
        }
    }

    private static Entry parse(Path file, String name) throws IOException {
        if (!name.endsWith(".json.gz")) {
            return null;
        }
        String[] parts = name.substring(0, name.length() - ".json.gz".length()).split("-");
        if (parts.length != 3) {
            return null;
        }
        try {
            long seq = Long.parseLong(parts[0]);
            RecordKind kind = RecordKind.fromKey(parts[1]);
            int count = Integer.parseInt(parts[2]);
            return new Entry(seq, kind, count, Files.size(file), file, null);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** Keeps {@code batch}, making room by the policy above when the spool is full. */
    public Entry append(Batch batch) {
        long seq = nextSeq++;
        long bytes = batch.gzipBody().length;
        makeRoom(bytes);
        String name = String.format("%016d-%s-%d.json.gz", seq, batch.kind().key(), batch.count());
        Path file = dir.resolve(name);
        Path tmp = dir.resolve(name + ".tmp");
        Entry entry;
        try {
            Files.write(tmp, batch.gzipBody());
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
            entry = new Entry(seq, batch.kind(), batch.count(), bytes, file, null);
        } catch (IOException e) {
            logger.log(Level.WARNING, "spool: cannot write " + file + " (" + e.getMessage()
                    + "); keeping the batch in memory");
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException ignored) {
                // Best effort.
            }
            entry = new Entry(seq, batch.kind(), batch.count(), bytes, null, batch.gzipBody());
        }
        entries.put(seq, entry);
        totalBytes += bytes;
        return entry;
    }

    private void makeRoom(long incoming) {
        if (totalBytes + incoming <= maxBytes) {
            return;
        }
        // Stale heartbeats first, oldest first.
        Iterator<Map.Entry<Long, Entry>> it = entries.entrySet().iterator();
        while (it.hasNext() && totalBytes + incoming > maxBytes) {
            Entry e = it.next().getValue();
            if (e.kind() == RecordKind.HEARTBEAT) {
                it.remove();
                evict(e);
            }
        }
        while (!entries.isEmpty() && totalBytes + incoming > maxBytes) {
            evict(entries.pollFirstEntry().getValue());
        }
    }

    private void evict(Entry e) {
        delete(e);
        droppedRecords += e.count();
        logger.warning("spool full (" + maxBytes / (1024 * 1024) + " MiB): dropped " + e.count()
                + " " + e.kind().key() + " record(s), the oldest kept");
    }

    /** The oldest entries, up to {@code max}. */
    public List<Entry> oldest(int max) {
        List<Entry> out = new ArrayList<>(Math.min(max, entries.size()));
        for (Entry e : entries.values()) {
            if (out.size() == max) {
                break;
            }
            out.add(e);
        }
        return out;
    }

    /** The oldest entries of {@code kind}, up to {@code max}. */
    public List<Entry> oldestOfKind(RecordKind kind, int max) {
        List<Entry> out = new ArrayList<>();
        for (Entry e : entries.values()) {
            if (out.size() == max) {
                break;
            }
            if (e.kind() == kind) {
                out.add(e);
            }
        }
        return out;
    }

    /** The request body of {@code e}. */
    public byte[] read(Entry e) throws IOException {
        return e.data() != null ? e.data() : Files.readAllBytes(e.file());
    }

    /** Forgets {@code e} (the service answered for it). */
    public void remove(Entry e) {
        if (entries.remove(e.seq()) != null) {
            delete(e);
        }
    }

    private void delete(Entry e) {
        totalBytes -= e.bytes();
        if (e.file() != null) {
            try {
                Files.deleteIfExists(e.file());
            } catch (IOException ex) {
                logger.warning("spool: cannot delete " + e.file() + ": " + ex.getMessage());
            }
        }
    }

    public int batches() {
        return entries.size();
    }

    public long records() {
        long n = 0;
        for (Entry e : entries.values()) {
            n += e.count();
        }
        return n;
    }

    public long bytes() {
        return totalBytes;
    }

    public long maxBytes() {
        return maxBytes;
    }

    public long droppedRecords() {
        return droppedRecords;
    }
}
