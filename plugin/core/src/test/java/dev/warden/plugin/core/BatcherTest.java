package dev.warden.plugin.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class BatcherTest {
    @Test
    void groupsByEndpointAndKeepsOrder() {
        List<WardenRecord> records = new ArrayList<>();
        records.add(TestSupport.chat("one"));
        records.add(TestSupport.heartbeat());
        records.add(TestSupport.chat("two"));
        List<Batch> batches = new Batcher().batch(records);
        assertEquals(2, batches.size());
        Batch chat = batches.stream().filter(b -> b.kind() == RecordKind.CHAT).findFirst().orElseThrow();
        JsonArray body = TestSupport.gunzipArray(chat.gzipBody());
        assertEquals(2, chat.count());
        assertEquals("one", body.get(0).getAsJsonObject().get("message").getAsString());
        assertEquals("two", body.get(1).getAsJsonObject().get("message").getAsString());
        assertEquals(records.get(0).id().toString(), body.get(0).getAsJsonObject().get("id").getAsString());
    }

    @Test
    void atMostAThousandRecordsPerRequest() {
        List<WardenRecord> records = new ArrayList<>();
        for (int i = 0; i < 2500; i++) {
            records.add(TestSupport.chat("m" + i));
        }
        List<Batch> batches = new Batcher().batch(records);
        assertEquals(List.of(1000, 1000, 500), batches.stream().map(Batch::count).toList());
        int seen = 0;
        for (Batch b : batches) {
            JsonArray body = TestSupport.gunzipArray(b.gzipBody());
            assertEquals(b.count(), body.size());
            assertEquals("m" + seen, body.get(0).getAsJsonObject().get("message").getAsString());
            seen += body.size();
        }
    }

    @Test
    void bodiesStayUnderTheByteLimit() {
        String big = "x".repeat(4096);
        List<WardenRecord> records = new ArrayList<>();
        for (int i = 0; i < 600; i++) { // ~2.6 MB of JSON
            records.add(TestSupport.chat(big));
        }
        List<Batch> batches = new Batcher().batch(records);
        assertTrue(batches.size() >= 3, "split by size: " + batches.size());
        int total = 0;
        for (Batch b : batches) {
            int bytes = TestSupport.gunzipArray(b.gzipBody()).toString().getBytes(StandardCharsets.UTF_8).length;
            assertTrue(bytes <= Batcher.MAX_BODY_BYTES, "batch of " + bytes + " bytes");
            total += b.count();
        }
        assertEquals(600, total);
    }
}
