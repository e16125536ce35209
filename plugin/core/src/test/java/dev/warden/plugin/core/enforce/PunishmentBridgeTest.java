package dev.warden.plugin.core.enforce;

import static dev.warden.plugin.core.enforce.ActionFeedTest.NOTCH;
import static dev.warden.plugin.core.enforce.ActionFeedTest.NOW;
import static dev.warden.plugin.core.enforce.ActionFeedTest.SERVER;
import static dev.warden.plugin.core.enforce.ActionFeedTest.id;
import static dev.warden.plugin.core.enforce.ActionFeedTest.issue;
import static dev.warden.plugin.core.enforce.ActionFeedTest.revoke;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import dev.warden.plugin.core.Capture;
import dev.warden.plugin.core.EventQueue;
import dev.warden.plugin.core.WardenConfig;
import dev.warden.plugin.core.WardenRecord;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Dashboard actions applied through a punishment plugin: one writer, the plugin's echo recognised
 * (nothing sent twice), its id linked to the dashboard punishment and kept in enforcement.json, an
 * in-game revoke of that id sent by the dashboard punishment's id, a dashboard revoke lifted in
 * the plugin (its echo not sent), and Warden's own lists when no plugin is there.
 */
class PunishmentBridgeTest {
    static final UUID OTHER = UUID.fromString("853c80ef-3c37-49fd-aa49-938b674adae6");
    final ActionFeedTest.Moving clock = new ActionFeedTest.Moving();
    final EventQueue queue = new EventQueue(1000);

    @TempDir
    Path dir;

    /**
     * Behaves like LiteBans: records each call, then fires its own event for it (with its own id)
     * into the integration path, as its listener would.
     */
    static final class FakePlugin implements PunishmentBridge {
        final List<String> calls = new ArrayList<>();
        Capture integration;
        long lastId = 41;
        String refuse;
        boolean returnsId;
        boolean echoes = true;

        @Override
        public String source() {
            return "litebans";
        }

        @Override
        public String displayName() {
            return "LiteBans";
        }

        @Override
        public String issue(String type, UUID player, String playerName, String reason, Instant expiresAt) throws Refused {
            calls.add("issue " + type + " " + playerName + " " + reason + " " + expiresAt);
            if (refuse != null) {
                throw new Refused(refuse);
            }
            String id = Long.toString(++lastId);
            if (echoes) {
                integration.punishmentIssued(player, playerName, type, reason, null, "Console", null, expiresAt, false,
                        "global", source(), id);
            }
            return returnsId ? id : null;
        }

        @Override
        public void lift(String type, UUID player, String playerName, String externalId, String reason) {
            calls.add("lift " + type + " " + player + " " + externalId);
            if (echoes) {
                integration.punishmentRevoked(player, playerName, type, null, "Console", reason, source(),
                        externalId == null ? Long.toString(lastId) : externalId);
            }
        }
    }

    final FakePlugin plugin = new FakePlugin();

    ActionFeed feed(ActionFeedTest.Script script, boolean through, boolean writer, PunishmentBridge bridge,
            ActionFeedTest.Platform platform, Sanctions sanctions) throws Exception {
        FeedState state = FeedState.load(dir, sanctions, new BridgeLinks(clock));
        Capture capture = new Capture(queue, SERVER, WardenConfig.defaults("http://x", "wdn_plugin_x"), clock);
        capture.bridgeLinks(state.links());
        plugin.integration = capture;
        ActionFeed feed = new ActionFeed(state, sanctions, platform, SERVER,
                new EnforcementConfig(true, null, 0, through, writer), script, 60, clock, Logger.getLogger("test"));
        feed.echoWait(Duration.ofMillis(200));
        feed.useBridge(bridge);
        return feed;
    }

    static List<String> details(ActionFeedTest.Script script) {
        List<String> out = new ArrayList<>();
        script.acks.forEach(a -> a.getAsJsonArray("results").forEach(r -> out.add(r.getAsJsonObject().get("outcome").getAsString()
                + (r.getAsJsonObject().has("detail") ? " " + r.getAsJsonObject().get("detail").getAsString() : ""))));
        return out;
    }

    List<JsonObject> sent() {
        List<JsonObject> out = new ArrayList<>();
        for (WardenRecord r : queue.drain(1000)) {
            out.add(r.toJson());
        }
        return out;
    }

    static JsonObject pluginRevoke(int n, String source, String externalId, String type) {
        JsonObject o = revoke(n, 50, type);
        o.getAsJsonObject("revoke").addProperty("source_plugin", source);
        o.getAsJsonObject("revoke").addProperty("external_id", externalId);
        return o;
    }

    @Test
    void theWriterAppliesThroughThePluginTheEchoIsNotSentAndTheLinkOutlivesARestart() throws Exception {
        ActionFeedTest.Script script = new ActionFeedTest.Script();
        script.page(issue(1, "ban", "x-ray", NOW.plus(Duration.ofDays(1)), "global", NOW),
                issue(2, "mute", "caps", null, "global", NOW), issue(3, "warning", "language", null, "global", NOW),
                issue(4, "kick", "afk", null, "global", NOW));
        ActionFeedTest.Platform platform = new ActionFeedTest.Platform();
        Sanctions sanctions = new Sanctions();
        ActionFeed feed = feed(script, true, true, plugin, platform, sanctions);
        feed.step(0);
        assertEquals(List.of("issue ban Notch x-ray " + NOW.plus(Duration.ofDays(1)), "issue mute Notch caps null",
                "issue warning Notch language null"), plugin.calls);
        assertEquals(List.of("applied through LiteBans (id 42)", "applied through LiteBans (id 43)",
                "applied through LiteBans (id 44)", "applied"), details(script));
        assertEquals(List.of("kick Kicked: afk"), platform.calls, "a kick stays Warden's own; the plugin kicks for its ban");
        assertNull(sanctions.ban(NOTCH, NOW), "not on Warden's own list: the plugin enforces it");
        assertEquals(List.of(), sent(), "the plugin's echoes are not sent: the dashboard's punishments are in the log");
        assertTrue(feed.status().mode().contains("through LiteBans, written by this server"), feed.status().mode());

        // The links are in enforcement.json: after a restart, an in-game unban of the plugin's id
        // ends the dashboard's ban (revoked by punishment_id), and it is not re-applied.
        assertTrue(Files.readString(dir.resolve(FeedState.FILE_NAME)).contains("\"external_id\":\"42\""));
        ActionFeedTest.Script after = new ActionFeedTest.Script();
        after.page(issue(1, "ban", "x-ray", NOW.plus(Duration.ofDays(1)), "global", NOW));
        ActionFeed restarted = feed(after, true, true, plugin, new ActionFeedTest.Platform(), new Sanctions());
        restarted.step(0);
        assertEquals(3, plugin.calls.size(), "applied once across the restart");
        plugin.integration.punishmentRevoked(NOTCH, "Notch", "ban", null, "Bob", "mistake", "litebans", "42");
        List<JsonObject> revokes = sent();
        assertEquals(1, revokes.size());
        assertEquals(id(1).toString(), revokes.get(0).get("punishment_id").getAsString());
        assertFalse(revokes.get(0).has("external_id"), revokes.get(0).toString());
        assertEquals("revoke", revokes.get(0).get("action").getAsString());
        // The link is spent: a second revoke of that id is the plugin's own again.
        plugin.integration.punishmentRevoked(NOTCH, "Notch", "ban", null, "Bob", null, "litebans", "42");
        assertEquals("42", sent().get(0).get("external_id").getAsString());
    }

    @Test
    void aDashboardRevokeOfALinkedPunishmentIsLiftedInThePluginAndItsEchoIsNotSent() throws Exception {
        ActionFeedTest.Script script = new ActionFeedTest.Script();
        script.page(issue(1, "ban", "x-ray", null, "global", NOW));
        ActionFeed feed = feed(script, true, true, plugin, new ActionFeedTest.Platform(), new Sanctions());
        feed.step(0);
        script.page(revoke(2, 1, "ban"));
        feed.step(0);
        assertEquals("lift ban " + NOTCH + " 42", plugin.calls.get(1));
        assertEquals("applied lifted in LiteBans", details(script).get(1));
        assertEquals(List.of(), sent(), "the plugin's unban event is the echo of the dashboard's revoke");
        assertNull(feed.links().linkOf(id(1)));
    }

    @Test
    void aRevokeOfThePluginsOwnPunishmentIsLiftedByTheWriterWhateverApplyThroughSays() throws Exception {
        ActionFeedTest.Script script = new ActionFeedTest.Script();
        script.page(pluginRevoke(1, "litebans", "7", "mute"), pluginRevoke(2, "advancedban", "8", "ban"));
        feed(script, false, true, plugin, new ActionFeedTest.Platform(), new Sanctions()).step(0);
        assertEquals(List.of("lift mute " + NOTCH + " 7"), plugin.calls);
        assertEquals(List.of("applied lifted in LiteBans", "skipped not on this server's lists"), details(script));
        assertEquals(List.of(), sent(), "the echo of the lift is not sent");

        // Another server: not the writer.
        Files.delete(dir.resolve(FeedState.FILE_NAME));
        ActionFeedTest.Script other = new ActionFeedTest.Script();
        other.page(pluginRevoke(1, "litebans", "7", "mute"));
        feed(other, false, false, plugin, new ActionFeedTest.Platform(), new Sanctions()).step(0);
        assertEquals(1, plugin.calls.size());
        assertEquals(List.of("skipped lifted in LiteBans by the writer server (punishment-plugin-writer)"), details(other));
    }

    @Test
    void anotherServerSkipsWhatTheWriterApplies() throws Exception {
        ActionFeedTest.Script script = new ActionFeedTest.Script();
        script.page(issue(1, "ban", "x", null, "global", NOW), issue(2, "kick", "afk", null, "global", NOW));
        ActionFeedTest.Platform platform = new ActionFeedTest.Platform();
        Sanctions sanctions = new Sanctions();
        ActionFeed feed = feed(script, true, false, plugin, platform, sanctions);
        feed.step(0);
        assertEquals(List.of(), plugin.calls);
        assertEquals(List.of("skipped applied through LiteBans by the writer server (punishment-plugin-writer)", "applied"),
                details(script));
        assertNull(sanctions.ban(NOTCH, NOW));
        assertEquals(List.of("kick Kicked: afk"), platform.calls);
        assertTrue(feed.status().mode().contains("written by the writer server, not this one"), feed.status().mode());

        // The plugin reports here the ban the writer made (synced from a shared database): it is
        // the dashboard's ban, linked, not sent as a new one; an in-game unban here ends it.
        plugin.integration.punishmentIssued(NOTCH, "Notch", "ban", "x", null, "Console", null, null, false, "global",
                "litebans", "42");
        assertEquals(List.of(), sent(), "the synced copy of the writer's ban is not a second punishment");
        plugin.integration.punishmentRevoked(NOTCH, "Notch", "ban", null, "Bob", null, "litebans", "42");
        List<JsonObject> revokes = sent();
        assertEquals(1, revokes.size());
        assertEquals(id(1).toString(), revokes.get(0).get("punishment_id").getAsString());

        // A dashboard revoke: this server skips it, and the plugin's synced unban is its echo.
        plugin.integration.punishmentIssued(NOTCH, "Notch", "mute", "y", null, "Console", null, null, false, "global",
                "litebans", "43");
        script.page(issue(3, "mute", "y", null, "global", NOW));
        feed.step(0);
        plugin.integration.punishmentIssued(NOTCH, "Notch", "mute", "y", null, "Console", null, null, false, "global",
                "litebans", "44");
        assertEquals(1, sent().size(), "a mute reported before its action came is the plugin's own");
        script.page(revoke(4, 3, "mute"));
        feed.step(0);
        plugin.integration.punishmentRevoked(NOTCH, "Notch", "mute", null, "Console", null, "litebans", "44");
        assertEquals(List.of(), sent(), "the synced unmute is the echo of the dashboard's revoke");
        assertEquals(List.of(), plugin.calls, "only the writer calls the plugin");
    }

    @Test
    void withNoPluginEnabledWardensOwnListsApplyAndStatusSaysSo() throws Exception {
        ActionFeedTest.Script script = new ActionFeedTest.Script();
        script.page(issue(1, "ban", "x", null, "global", NOW));
        ActionFeedTest.Platform platform = new ActionFeedTest.Platform();
        Sanctions sanctions = new Sanctions();
        ActionFeed feed = feed(script, true, true, null, platform, sanctions);
        feed.step(0);
        assertNotNull(sanctions.ban(NOTCH, NOW));
        assertEquals(List.of("kick You are banned from this server: x"), platform.calls);
        String lines = String.join("\n", dev.warden.plugin.core.StatusText.feedLines(feed.status(), NOW));
        assertTrue(lines.contains("enforcement: Warden's own lists: apply-through is punishment-plugin, but no supported"), lines);
    }

    @Test
    void aRefusalIsAFailedAckAndLinksNothing() throws Exception {
        plugin.refuse = "Notch is already banned";
        ActionFeedTest.Script script = new ActionFeedTest.Script();
        script.page(issue(1, "ban", "x", null, "global", NOW));
        ActionFeed feed = feed(script, true, true, plugin, new ActionFeedTest.Platform(), new Sanctions());
        feed.step(0);
        assertEquals(List.of("failed LiteBans refused it: Notch is already banned"), details(script));
        assertNull(feed.links().linkOf(id(1)));
    }

    @Test
    void anIdTheCallReturnsIsLinkedAndAMissingEchoIsNotWaitedForever() throws Exception {
        plugin.returnsId = true;
        plugin.echoes = false;
        ActionFeedTest.Script script = new ActionFeedTest.Script();
        script.page(issue(1, "ban", "x", null, "global", NOW));
        ActionFeed feed = feed(script, true, true, plugin, new ActionFeedTest.Platform(), new Sanctions());
        feed.step(0);
        assertEquals("42", feed.links().linkOf(id(1)).externalId());
        plugin.returnsId = false;
        script.page(issue(2, "mute", "x", null, "global", NOW));
        feed.step(0);
        assertEquals(List.of("applied through LiteBans (id 42)", "applied through LiteBans (its id not seen yet)"),
                details(script));
        // The late event still links (and is not sent) while it is expected.
        assertTrue(plugin.integration.punishmentIssued(OTHER, null, "mute", null, null, null, null, null, false, null,
                "litebans", "99") , "another player's mute is the plugin's own");
        assertFalse(plugin.integration.punishmentIssued(NOTCH, null, "mute", null, null, null, null, null, false, null,
                "litebans", "43"));
        assertEquals("43", feed.links().linkOf(id(2)).externalId());
    }

    @Test
    void anEchoIsOnlyTheExpectedPlayerTypeAndPluginWithinItsTime() {
        BridgeLinks links = new BridgeLinks(clock);
        links.expectIssue("litebans", NOTCH, "ban", id(1));
        assertFalse(links.issueSeen("litebans", OTHER, "ban", "1"), "another player");
        assertFalse(links.issueSeen("litebans", NOTCH, "mute", "2"), "another type");
        assertFalse(links.issueSeen("advancedban", NOTCH, "ban", "3"), "another plugin");
        assertTrue(links.issueSeen("litebans", NOTCH, "ban", "4"));
        assertFalse(links.issueSeen("litebans", NOTCH, "ban", "5"), "an echo is seen once");
        links.expectIssue("litebans", NOTCH, "ban", id(2));
        clock.now = NOW.plus(BridgeLinks.ECHO_TTL).plusSeconds(1);
        assertFalse(links.issueSeen("litebans", NOTCH, "ban", "6"), "too late: the plugin's own");
        links.expectRevoke("litebans", NOTCH, "ban");
        clock.now = clock.now.plus(BridgeLinks.ECHO_TTL).plusSeconds(1);
        assertEquals(new BridgeLinks.Revoke(false, id(1)), links.revokeSeen("litebans", NOTCH, "ban", "4"),
                "a late revoke of a linked id is sent by the dashboard punishment's id");
    }

    @Test
    void theShownReasonCarriesTheAppealLinkWithinThePluginsLength() {
        AppealLink link = new AppealLink("https://w.example/appeal/tok", NOW.plusSeconds(60));
        assertEquals("griefing - Appeal at https://w.example/appeal/tok", BridgeDispatch.shownReason("griefing", link, 100, NOW));
        assertEquals("Appeal at https://w.example/appeal/tok", BridgeDispatch.shownReason(null, link, 100, NOW));
        assertEquals("grief - Appeal at https://w.example/appeal/tok", BridgeDispatch.shownReason("griefing", link, 46, NOW));
        assertEquals("griefing", BridgeDispatch.shownReason("griefing", link, 100, NOW.plusSeconds(60)), "an expired link is left out");
        assertEquals("grie", BridgeDispatch.shownReason("griefing", link, 4, NOW), "a link that cannot fit is left out");
    }
}
