package dev.warden.plugin.core;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPOutputStream;

/**
 * Groups records by endpoint and cuts them into batches within the contract's bounds (§1): at
 * most 1,000 records and at most {@link #MAX_BODY_BYTES} of JSON before compression (the service
 * takes 1 MiB after decompression). Records keep their order within a kind.
 */
public final class Batcher {
    public static final int MAX_RECORDS = 1000;
    /** Below the service's 1,048,576-byte limit, with room to spare. */
    public static final int MAX_BODY_BYTES = 1_000_000;

    private final int maxRecords;
    private final int maxBodyBytes;

    public Batcher() {
        this(MAX_RECORDS, MAX_BODY_BYTES);
    }

    Batcher(int maxRecords, int maxBodyBytes) {
        this.maxRecords = maxRecords;
        this.maxBodyBytes = maxBodyBytes;
    }

    public List<Batch> batch(List<WardenRecord> records) {
        Map<RecordKind, List<byte[]>> byKind = new EnumMap<>(RecordKind.class);
        for (WardenRecord r : records) {
            byKind.computeIfAbsent(r.kind(), k -> new ArrayList<>())
                    .add(r.toJson().toString().getBytes(StandardCharsets.UTF_8));
        }
        List<Batch> out = new ArrayList<>();
        for (Map.Entry<RecordKind, List<byte[]>> e : byKind.entrySet()) {
            List<byte[]> current = new ArrayList<>();
            int bytes = 2;
            for (byte[] json : e.getValue()) {
                int extra = json.length + (current.isEmpty() ? 0 : 1);
                if (!current.isEmpty() && (current.size() == maxRecords || bytes + extra > maxBodyBytes)) {
                    out.add(encode(e.getKey(), current));
                    current = new ArrayList<>();
                    bytes = 2;
                    extra = json.length;
                }
                current.add(json);
                bytes += extra;
            }
            if (!current.isEmpty()) {
                out.add(encode(e.getKey(), current));
            }
        }
        return out;
    }

    private static Batch encode(RecordKind kind, List<byte[]> jsons) {
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(buffer, 8192)) {
            gz.write('[');
            for (int i = 0; i < jsons.size(); i++) {
                if (i > 0) {
                    gz.write(',');
                }
                gz.write(jsons.get(i));
            }
            gz.write(']');
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new Batch(kind, jsons.size(), buffer.toByteArray());
    }
}
