package dev.warden.plugin.paper.punishments.litebans;

import static dev.warden.plugin.paper.punishments.PunishmentHarness.PLAYER;
import static dev.warden.plugin.paper.punishments.PunishmentHarness.STAFF;
import static dev.warden.plugin.paper.punishments.PunishmentHarness.assertPunishment;
import static dev.warden.plugin.paper.punishments.PunishmentHarness.issue;
import static dev.warden.plugin.paper.punishments.PunishmentHarness.revoke;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import dev.warden.plugin.core.Records;
import dev.warden.plugin.core.WardenConfig;
import dev.warden.plugin.core.integration.Integration;
import dev.warden.plugin.core.integration.Integrations;
import dev.warden.plugin.paper.punishments.PunishmentHarness;
import java.time.Instant;
import java.util.List;
import litebans.api.Entry;
import litebans.api.Events;
import org.junit.jupiter.api.Test;

/** LiteBans' entries, as its Events.Listener receives them, and the punishment records. */
class LiteBansIntegrationTest {
    static final Instant START = Instant.parse("2026-11-01T10:00:00.123Z");
    static final Instant END = Instant.parse("2099-01-01T00:00:00Z");

    final PunishmentHarness h = new PunishmentHarness();
    final Integration integration = h.on("LiteBans");
    final Events.Listener listener = LiteBansIntegration.listener(h.capture, integration);

    /** An entry as LiteBans builds one (its real constructor; {@code dateEnd} -1 is permanent). */
    static Entry entry(long id, String type, String uuid, String ip, String reason, String executorUuid,
            String executorName, String removedByUuid, String removedByName, String removalReason, long dateEnd,
            String scope, boolean ipban) {
        return new Entry(id, type, uuid, ip, reason, executorUuid, executorName, removedByUuid, removedByName,
                removalReason, START.toEpochMilli(), dateEnd, scope, "survival", (byte) 0, false, ipban, true) {};
    }

    @Test
    void temporaryBanByStaffOnEveryServer() {
        listener.entryAdded(entry(17, "ban", PLAYER.toString(), "203.0.113.7", "Griefing", STAFF.toString(), "Moderator",
                null, null, null, END.toEpochMilli(), "*", false));
        assertPunishment(issue(null, "ban", "Griefing", STAFF, "Moderator", START, END, false, "global", "litebans",
                "17"), h.only());
        assertEquals(1, integration.snapshot().sent());
    }

    @Test
    void permanentIpBanByTheConsoleOnOneServer() {
        listener.entryAdded(entry(18, "ban", PLAYER.toString(), "203.0.113.7", "Alt farm", "CONSOLE", "Console",
                null, null, null, -1, "lobby", true));
        assertPunishment(issue(null, "ban", "Alt farm", null, "Console", START, null, true, "lobby", "litebans", "18"),
                h.only());
    }

    @Test
    void muteWarningAndKick() {
        listener.entryAdded(entry(3, "mute", PLAYER.toString(), null, "Spam", STAFF.toString(), "Moderator", null, null,
                null, END.toEpochMilli(), "*", false));
        assertPunishment(issue(null, "mute", "Spam", STAFF, "Moderator", START, END, false, "global", "litebans", "3"),
                h.only());
        listener.entryAdded(entry(4, "warn", PLAYER.toString(), null, "Language", STAFF.toString(), "Moderator", null,
                null, null, -1, "*", false));
        assertPunishment(issue(null, "warning", "Language", STAFF, "Moderator", START, null, false, "global",
                "litebans", "4"), h.only());
        listener.entryAdded(entry(5, "kick", PLAYER.toString(), null, "AFK", "CONSOLE", "Console", null, null, null, 0,
                "survival", false));
        Records.Punishment kick = h.only();
        assertPunishment(issue(null, "kick", "AFK", null, "Console", START, null, false, "survival", "litebans", "5"),
                kick);
        assertFalse(kick.toJson().has("expires_at"));
        assertEquals(3, integration.snapshot().sent());
    }

    @Test
    void anIpBanThatNamesNoPlayerIsCountedNotSent() {
        listener.entryAdded(entry(19, "ban", null, "203.0.113.7", "Proxy", "CONSOLE", "Console", null, null, null, -1,
                "*", true));
        assertTrue(h.records().isEmpty());
        assertEquals(0, integration.snapshot().sent());
        assertEquals(1, integration.snapshot().dropped());
        assertEquals("an IP punishment that names no player", integration.snapshot().droppedBecause());
    }

    @Test
    void revokesNameTheEntryAndSayWhoAndWhy() {
        listener.entryRemoved(entry(17, "ban", PLAYER.toString(), null, "Griefing", STAFF.toString(), "Moderator",
                "4566e69f-c907-48ee-8d71-d7ba5aa00d20", "Admin", "Appeal accepted", END.toEpochMilli(), "*", false));
        Records.Punishment unban = h.only();
        assertPunishment(revoke(null, "ban", java.util.UUID.fromString("4566e69f-c907-48ee-8d71-d7ba5aa00d20"),
                "Admin", "Appeal accepted", "litebans", "17"), unban);
        JsonObject json = unban.toJson();
        assertEquals("revoke", json.get("action").getAsString());
        assertEquals("Appeal accepted", json.get("revoke_reason").getAsString());
        assertEquals("17", json.get("external_id").getAsString());
        assertFalse(json.has("expires_at"));

        listener.entryRemoved(entry(3, "mute", PLAYER.toString(), null, "Spam", STAFF.toString(), "Moderator",
                "CONSOLE", "Console", null, -1, "*", false));
        assertPunishment(revoke(null, "mute", null, "Console", null, "litebans", "3"), h.only());
        listener.entryRemoved(entry(4, "warn", PLAYER.toString(), null, "Language", STAFF.toString(), "Moderator",
                STAFF.toString(), "Moderator", "", -1, "*", false));
        assertPunishment(revoke(null, "warning", STAFF, "Moderator", null, "litebans", "4"), h.only());
        assertEquals(3, integration.snapshot().sent());
    }

    @Test
    void anExpiryIsNotARevoke() {
        long past = Instant.now().minusSeconds(60).toEpochMilli();
        listener.entryRemoved(entry(20, "ban", PLAYER.toString(), null, "Griefing", STAFF.toString(), "Moderator",
                null, null, null, past, "*", false));
        assertTrue(h.records().isEmpty());
        assertEquals(0, integration.snapshot().sent());
    }

    @Test
    void nothingWhilePunishmentsAreNotCaptured() {
        WardenConfig base = WardenConfig.defaults("http://x", "wdn_plugin_x");
        WardenConfig off = new WardenConfig(base.baseUrl(), base.pluginKey(), 15, null, 1000, 64, 8, 5, 10, 300,
                true, true, true, true, false, true, "global", base.redactCommands(), List.of());
        PunishmentHarness quiet = new PunishmentHarness(off);
        Integration i = quiet.on("LiteBans");
        Events.Listener l = LiteBansIntegration.listener(quiet.capture, i);
        l.entryAdded(entry(1, "ban", PLAYER.toString(), null, "x", "CONSOLE", "Console", null, null, null, -1, "*",
                false));
        assertTrue(quiet.records().isEmpty());
        assertEquals(0, i.snapshot().sent());
    }

    @Test
    void aFailingHandlerDisablesLiteBansAloneAndTheStatusSaysSo() {
        Integration other = h.on("LibertyBans");
        Entry broken = new Entry(1, "ban", PLAYER.toString(), null, "x", null, null, null, null, null, 0, -1, "*", "s",
                (byte) 0, false, false, true) {
            @Override
            public String getReason() {
                throw new NoSuchMethodError("litebans.api.Entry.getReason()");
            }
        };
        listener.entryAdded(broken);
        assertFalse(integration.active());
        assertEquals(1, h.warnings.size(), h.warnings.toString());
        listener.entryAdded(entry(2, "ban", PLAYER.toString(), null, "x", "CONSOLE", "Console", null, null, null, -1,
                "*", false));
        assertTrue(h.records().isEmpty(), "a failed integration sends nothing more");
        assertEquals(1, h.warnings.size(), "logged once");
        assertTrue(other.active(), "the other integrations go on");
        List<String> status = Integrations.statusLines(h.integrations.snapshot());
        assertTrue(status.get(1).startsWith("    LiteBans test: failed (a punishment issued: java.lang.NoSuchMethodError"),
                status.toString());
        assertEquals("    LibertyBans test: on, 0 sent", status.get(2));
    }

    @Test
    void withoutLiteBansLoadedTheStartFailsAndIsListed() {
        Integration failed = h.integrations.enable("LiteBans", "2.17.2",
                i -> LiteBansIntegration.enable(h.capture, i));
        assertFalse(failed.active());
        assertTrue(failed.snapshot().problem().startsWith("starting: "), failed.snapshot().problem());
        assertTrue(integration.active(), "another integration is untouched");
    }
}
