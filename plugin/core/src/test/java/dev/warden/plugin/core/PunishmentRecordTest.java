package dev.warden.plugin.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The punishment record's issue and revoke shapes (contract §5), as Capture makes them. */
class PunishmentRecordTest {
    static final UUID SERVER = UUID.fromString("0190a5f2-0000-7000-8000-000000000001");
    static final UUID PLAYER = UUID.fromString("069a79f4-44e9-4726-a5be-fca90e38aaf5");
    static final UUID STAFF = UUID.fromString("853c80ef-3c37-49fd-aa49-938b674adae6");
    static final Instant NOW = Instant.parse("2026-11-29T06:00:00.123456789Z");

    final EventQueue queue = new EventQueue(10);
    final Capture capture = new Capture(queue, SERVER, WardenConfig.defaults("http://x", "wdn_plugin_x"),
            Clock.fixed(NOW, ZoneOffset.UTC));

    private Records.Punishment only() {
        List<WardenRecord> records = queue.drain(10);
        assertEquals(1, records.size());
        return (Records.Punishment) records.get(0);
    }

    @Test
    void anIssueFromAPunishmentPluginCarriesItsIdScopeAndTimes() {
        Instant began = NOW.minusSeconds(3);
        assertTrue(capture.punishmentIssued(PLAYER, "Notch", "ban", "Griefing", STAFF, "Moderator", began,
                NOW.plusSeconds(3600), true, "global", "litebans", "17"));
        JsonObject o = only().toJson();
        assertEquals(UuidV7.epochMillis(UUID.fromString(o.get("id").getAsString())), NOW.toEpochMilli());
        assertEquals(SERVER.toString(), o.get("server_id").getAsString());
        assertEquals(PLAYER.toString(), o.get("player_uuid").getAsString());
        assertEquals("Notch", o.get("player_name").getAsString());
        assertEquals("ban", o.get("type").getAsString());
        assertEquals("issue", o.get("action").getAsString());
        assertEquals("Griefing", o.get("reason").getAsString());
        assertEquals(STAFF.toString(), o.get("staff_uuid").getAsString());
        assertEquals("Moderator", o.get("staff_name").getAsString());
        assertEquals("2026-11-29T05:59:57.123456Z", o.get("issued_at").getAsString());
        assertEquals("2026-11-29T07:00:00.123456Z", o.get("expires_at").getAsString());
        assertTrue(o.get("ip_based").getAsBoolean());
        assertEquals("global", o.get("scope").getAsString());
        assertEquals("litebans", o.get("source_plugin").getAsString());
        assertEquals("17", o.get("external_id").getAsString());
        assertFalse(o.has("punishment_id"));
        assertFalse(o.has("revoke_reason"));
        assertEquals(15, o.size(), o.toString());
    }

    @Test
    void aRevokeNamesTheIssueAndSaysWhoWhenAndWhy() {
        assertTrue(capture.punishmentRevoked(PLAYER, null, "mute", null, "Console", "x".repeat(3000), "libertybans",
                "41"));
        Records.Punishment r = only();
        JsonObject o = r.toJson();
        assertEquals("revoke", o.get("action").getAsString());
        assertEquals("mute", o.get("type").getAsString());
        assertEquals("2026-11-29T06:00:00.123456Z", o.get("issued_at").getAsString(), "when it was revoked");
        assertEquals("Console", o.get("staff_name").getAsString());
        assertFalse(o.has("staff_uuid"), "the console");
        assertEquals(2048, o.get("revoke_reason").getAsString().length(), "clipped to the contract's length");
        assertEquals("libertybans", o.get("source_plugin").getAsString());
        assertEquals("41", o.get("external_id").getAsString());
        for (String absent : List.of("reason", "expires_at", "ip_based", "scope", "player_name", "punishment_id")) {
            assertFalse(o.has(absent), absent);
        }
        assertNull(r.punishmentId());
    }

    @Test
    void aRevokeMayNameTheIssuingRecordInstead() {
        UUID issued = UuidV7.at(NOW);
        JsonObject o = new Records.Punishment(UuidV7.at(NOW), SERVER, PLAYER, null, "ban", "revoke", null, null, null,
                NOW, null, null, null, null, null, issued, "Appeal").toJson();
        assertEquals(issued.toString(), o.get("punishment_id").getAsString());
        assertEquals("Appeal", o.get("revoke_reason").getAsString());
        assertFalse(o.has("external_id"));
    }

    @Test
    void nothingWhilePunishmentsAreNotCaptured() {
        WardenConfig base = WardenConfig.defaults("http://x", "wdn_plugin_x");
        WardenConfig off = new WardenConfig(base.baseUrl(), base.pluginKey(), 15, null, 1000, 64, 8, 5, 10, 300,
                true, true, true, true, false, true, "global", base.redactCommands(), List.of());
        capture.configure(off);
        assertFalse(capture.punishmentIssued(PLAYER, null, "ban", null, null, null, null, null, false, null, "x", "1"));
        assertFalse(capture.punishmentRevoked(PLAYER, null, "ban", null, null, null, "x", "1"));
        assertTrue(queue.drain(10).isEmpty());
    }
}
