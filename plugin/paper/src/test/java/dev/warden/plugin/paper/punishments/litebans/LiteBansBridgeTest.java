package dev.warden.plugin.paper.punishments.litebans;

import static dev.warden.plugin.paper.punishments.PunishmentHarness.PLAYER;
import static dev.warden.plugin.paper.punishments.litebans.LiteBansIntegrationTest.entry;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.warden.plugin.core.Records;
import dev.warden.plugin.core.enforce.BridgeLinks;
import dev.warden.plugin.core.enforce.PunishmentBridge;
import dev.warden.plugin.paper.punishments.ConsoleCommands;
import dev.warden.plugin.paper.punishments.PunishmentHarness;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Consumer;
import litebans.api.Events;
import org.junit.jupiter.api.Test;

/**
 * Dashboard actions as LiteBans console commands, and LiteBans' events for them (the echo) through
 * the real integration listener: recognised, linked, never sent twice.
 */
class LiteBansBridgeTest {
    static final Instant NOW = Instant.parse("2026-11-29T07:00:00Z");
    static final UUID WEB_BAN = UUID.fromString("0190a5f2-0000-7000-8000-000000000042");

    final PunishmentHarness h = new PunishmentHarness();
    final Events.Listener listener = LiteBansIntegration.listener(h.capture, h.on("LiteBans"));
    final BridgeLinks links = new BridgeLinks(Clock.systemUTC());
    final List<String> commands = new ArrayList<>();
    Consumer<String> plugin = c -> {};
    final LiteBansBridge bridge = new LiteBansBridge(c -> {
        commands.add(c);
        plugin.accept(c);
    }, Clock.fixed(NOW, ZoneOffset.UTC));

    LiteBansBridgeTest() {
        h.capture.bridgeLinks(links);
    }

    List<Records.Punishment> sent() {
        return h.punishments();
    }

    @Test
    void banTempbanMuteWarningAndLiftsAreItsSilentConsoleCommands() throws Exception {
        bridge.issue("ban", PLAYER, "Notch", "x-ray", null);
        bridge.issue("ban", PLAYER, "Notch", "x-ray", NOW.plus(Duration.ofDays(7)));
        bridge.issue("mute", PLAYER, "Notch", "caps", NOW.plusSeconds(90));
        bridge.issue("mute", PLAYER, "Notch", null, null);
        bridge.issue("warning", PLAYER, "Notch", "language", NOW.plusSeconds(3600));
        bridge.lift("ban", PLAYER, null, "17", "appeal accepted");
        bridge.lift("mute", PLAYER, null, null, null);
        assertEquals(List.of(
                "litebans:ban -s " + PLAYER + " x-ray",
                "litebans:tempban -s " + PLAYER + " 10080m x-ray",
                "litebans:tempmute -s " + PLAYER + " 2m caps",
                "litebans:mute -s " + PLAYER,
                "litebans:warn -s " + PLAYER + " language",
                "litebans:unban -s " + PLAYER + " appeal accepted",
                "litebans:unmute -s " + PLAYER), commands);
        assertThrows(PunishmentBridge.Refused.class, () -> bridge.issue("kick", PLAYER, "Notch", "x", null));
        assertThrows(PunishmentBridge.Refused.class, () -> bridge.lift("ban", null, null, "17", null));
    }

    @Test
    void reasonsAreOneSafeArgumentAndKeepTheAppealLink() throws Exception {
        bridge.issue("ban", PLAYER, "Notch", "he said \"hi\"\nthen §4griefed &lthe spawn\u0000 ' ok", null);
        bridge.issue("ban", PLAYER, "Notch", "-s 30d server:lobby", null);
        bridge.issue("ban", PLAYER, "Notch", "1d is what he gets", null);
        String appeal = "griefing - Appeal at https://warden.example.net/appeal/AbC_12-x.y";
        bridge.issue("ban", PLAYER, "Notch", appeal, null);
        bridge.issue("ban", PLAYER, "Notch", "x".repeat(3000), null);
        assertEquals("litebans:ban -s " + PLAYER + " he said \"hi\" then griefed the spawn ' ok", commands.get(0));
        assertEquals("litebans:ban -s " + PLAYER + " Reason: -s 30d server:lobby", commands.get(1),
                "no word of the reason is read as a flag, a duration or a scope");
        assertEquals("litebans:ban -s " + PLAYER + " Reason: 1d is what he gets", commands.get(2));
        assertTrue(commands.get(3).endsWith(" " + appeal), commands.get(3));
        assertEquals(("litebans:ban -s " + PLAYER + " ").length() + LiteBansBridge.MAX_REASON, commands.get(4).length());
        assertEquals("a b", ConsoleCommands.text(" a\r\n\tb "));
    }

    @Test
    void itsEventForTheBanIsTheEchoLinkedNotSentAndAnInGameUnbanEndsTheWebBan() throws Exception {
        plugin = c -> listener.entryAdded(entry(17, "ban", PLAYER.toString(), null, "x-ray", null, "Console", null, null,
                null, -1, "*", false));
        links.expectIssue("litebans", PLAYER, "ban", WEB_BAN);
        bridge.issue("ban", PLAYER, "Notch", "x-ray", null);
        assertEquals(List.of(), sent(), "the echo is not a second punishment");
        assertEquals("17", links.linkOf(WEB_BAN).externalId());

        // Another ban by staff in-game is LiteBans' own and is sent.
        listener.entryAdded(entry(18, "ban", PLAYER.toString(), null, "alt", null, "Console", null, null, null, -1,
                "*", false));
        assertEquals("18", sent().get(0).externalId());

        // /unban in LiteBans of the mirrored ban: the revoke names the web ban.
        listener.entryRemoved(entry(17, "ban", PLAYER.toString(), null, "x-ray", null, "Console", null, "Bob", "sorry",
                -1, "*", false));
        Records.Punishment revoke = sent().get(0);
        assertEquals(WEB_BAN, revoke.punishmentId());
        assertEquals(null, revoke.externalId());
        assertEquals("revoke", revoke.action());
    }

    @Test
    void itsEventForADashboardLiftIsNotSent() throws Exception {
        plugin = c -> listener.entryRemoved(entry(17, "ban", PLAYER.toString(), null, "x-ray", null, "Console", null,
                "Console", null, -1, "*", false));
        links.expectRevoke("litebans", PLAYER, "ban");
        bridge.lift("ban", PLAYER, null, "17", "appeal accepted");
        assertEquals(List.of(), sent());
    }
}
