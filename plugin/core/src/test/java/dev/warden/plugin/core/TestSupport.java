package dev.warden.plugin.core;

import com.google.gson.JsonArray;
import com.google.gson.JsonParser;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.zip.GZIPInputStream;

final class TestSupport {
    private TestSupport() {}

    static final UUID SERVER = UUID.fromString("0190a5f2-0000-7000-8000-000000000001");
    static final UUID PLAYER = UUID.fromString("069a79f4-44e9-4726-a5be-fca90e38aaf5");

    static JsonArray gunzipArray(byte[] gz) {
        try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(gz))) {
            return JsonParser.parseString(new String(in.readAllBytes(), StandardCharsets.UTF_8)).getAsJsonArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Records.Chat chat(String message) {
        Instant at = Instant.now();
        return new Records.Chat(UuidV7.at(at), SERVER, PLAYER, "Notch", "chat", message, "global", at);
    }

    static Records.Heartbeat heartbeat() {
        Instant at = Instant.now();
        return new Records.Heartbeat(UuidV7.at(at), SERVER, 20, 1, 100, at, "lobby", "Paper 1.21.4", 512, 2048, true);
    }

    /** A logger whose messages the test can read. */
    static final class CapturedLog {
        final Logger logger;
        final List<String> messages = new ArrayList<>();

        CapturedLog(String name) {
            logger = Logger.getLogger(name + "-" + UUID.randomUUID());
            logger.setUseParentHandlers(false);
            logger.addHandler(new Handler() {
                @Override
                public void publish(LogRecord record) {
                    synchronized (messages) {
                        messages.add(record.getMessage() + (record.getThrown() == null ? "" : " " + record.getThrown()));
                    }
                }

                @Override
                public void flush() {}

                @Override
                public void close() {}
            });
        }

        String all() {
            synchronized (messages) {
                return String.join("\n", messages);
            }
        }
    }
}
