package dev.warden.plugin.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Backoff, redaction, names, properties, text, ids and the server id. */
class SmallPartsTest {
    @Test
    void backoffDoublesWithJitterUpToTheCapAndResets() {
        double[] r = {0.0};
        Backoff b = new Backoff(1000, 8000, () -> r[0]);
        assertEquals(500, b.nextDelayMillis()); // ceiling 1 s: between 0.5 and 1 s
        assertEquals(1000, b.nextDelayMillis()); // 2 s
        r[0] = 0.999_999;
        assertEquals(3999, b.nextDelayMillis()); // 4 s
        assertEquals(7999, b.nextDelayMillis()); // 8 s
        assertEquals(7999, b.nextDelayMillis()); // capped
        r[0] = 0.0;
        assertEquals(4000, b.nextDelayMillis());
        b.reset();
        assertEquals(500, b.nextDelayMillis());
    }

    @Test
    void redactsPasswordCommandsAndLeavesOthers() {
        CommandRedactor r = new CommandRedactor(CommandRedactor.DEFAULT_REDACTED, List.of("/secret"));
        assertEquals("/login [redacted]", r.apply("/login hunter2"));
        assertEquals("/LOGIN [redacted]", r.apply("/LOGIN hunter2 hunter2"));
        assertEquals("/authme:register [redacted]", r.apply("/authme:register pw pw"));
        assertEquals("/l [redacted]", r.apply("/l pw"));
        assertEquals("/login", r.apply("/login"));
        assertEquals("/msg bob login hunter2", r.apply("/msg bob login hunter2"));
        assertEquals("/loginx pw", r.apply("/loginx pw"));
        assertNull(r.apply("/secret stuff"));
        assertNull(r.apply("/plugin:SECRET"));
    }

    @Test
    void eventNamesFollowTheContract() {
        EventNames.check("crate_opened");
        EventNames.check("a".repeat(64));
        for (String reserved : List.of("session_x", "punish_x", "chat_spam", "rank_up", "block_break")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> EventNames.check(reserved));
            assertTrue(e.getMessage().startsWith("reserved_prefix"), e.getMessage());
        }
        for (String bad : List.of("", "Crate", "crate-opened", "a".repeat(65), "é")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> EventNames.check(bad));
            assertTrue(e.getMessage().startsWith("invalid_event_name"), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> EventNames.check(null));
    }

    @Test
    void propertiesAreCheckedAndCopiedAtTheCall() {
        Map<String, Object> p = new HashMap<>();
        p.put("crate", "vote");
        p.put("count", 3);
        p.put("ratio", 0.5);
        p.put("items", List.of("a", 1, true));
        p.put("nested", Map.of("deep", Map.of("x", 1)));
        p.put("none", null);
        var json = Properties.toJson(p);
        p.put("crate", "changed later");
        assertEquals("vote", json.get("crate").getAsString());
        assertEquals(3, json.get("count").getAsInt());
        assertTrue(json.get("none").isJsonNull());

        assertThrows(IllegalArgumentException.class, () -> Properties.toJson(Map.of("x", Double.NaN)));
        assertThrows(IllegalArgumentException.class, () -> Properties.toJson(Map.of("x", "a\u0000b")));
        assertThrows(IllegalArgumentException.class, () -> Properties.toJson(Map.of("x", "\ud800")));
        assertThrows(IllegalArgumentException.class, () -> Properties.toJson(Map.of("x", new Object())));
        assertThrows(IllegalArgumentException.class, () -> Properties.toJson(Map.of("x", "y".repeat(70_000))));

        Map<String, Object> deep = new HashMap<>();
        Map<String, Object> cur = deep;
        for (int i = 1; i < 64; i++) { // levels 1..64
            Map<String, Object> next = new HashMap<>();
            cur.put("n", next);
            cur = next;
        }
        Properties.toJson(deep);
        cur.put("n", Map.of()); // level 65
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Properties.toJson(deep));
        assertTrue(e.getMessage().startsWith("too_deep"), e.getMessage());
    }

    @Test
    void textIsClippedToTheContract() {
        assertEquals("abc", Text.clip("abc", 3));
        assertEquals("ab", Text.clip("abc", 2));
        assertEquals("ab", Text.clip("a\u0000b", 10));
        assertEquals("a\uFFFDb", Text.clip("a\ud800b", 10));
        assertEquals("\uD83D\uDE00\uD83D\uDE00", Text.clip("\uD83D\uDE00\uD83D\uDE00\uD83D\uDE00", 2)); // code points
        assertNull(Text.clip("\u0000", 5));
        assertNull(Text.clip(null, 5));
        assertEquals(4096, new Records.Chat(null, null, null, null, "chat", "x".repeat(5000), null, null).message().length());
    }

    @Test
    void idsAreVersion7AndCarryTheirTime() {
        Instant at = Instant.parse("2026-11-28T12:00:00.123Z");
        UUID id = UuidV7.at(at);
        assertEquals(7, id.version());
        assertEquals(2, id.variant());
        assertEquals(at.toEpochMilli(), UuidV7.epochMillis(id));
        List<UUID> ids = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            ids.add(UuidV7.at(at));
        }
        assertEquals(1000, ids.stream().distinct().count());
    }

    @Test
    void serverIdIsMadeOnceAndKept(@TempDir Path dir) throws Exception {
        UUID first = ServerIdentity.loadOrCreate(dir);
        assertEquals(first, ServerIdentity.loadOrCreate(dir));
        assertEquals(first.toString(), Files.readString(dir.resolve("server-id")).strip());
        Files.writeString(dir.resolve("server-id"), "garbage");
        assertThrows(java.io.IOException.class, () -> ServerIdentity.loadOrCreate(dir));
    }

    @Test
    void configNeverShowsTheKey() {
        WardenConfig c = WardenConfig.defaults("https://warden.example.com", "wdn_plugin_" + "ab".repeat(32));
        assertTrue(c.problems().isEmpty(), c.problems().toString());
        assertTrue(!c.toString().contains("abab"), c.toString());
        assertTrue(!WardenConfig.defaults("ftp://x", "PASTE_YOUR_PLUGIN_KEY_HERE").problems().isEmpty());
    }
}
