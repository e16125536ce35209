package dev.warden.plugin.core.enforce;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.warden.plugin.core.Transport;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.UUID;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The feed's loop against a scripted transport: lists, platform calls, acks, saved state. */
class ActionFeedTest {
    static final UUID SERVER = UUID.fromString("0190a5f2-0000-7000-8000-000000000001");
    static final UUID NOTCH = UUID.fromString("069a79f4-44e9-4726-a5be-fca90e38aaf5");
    static final Instant NOW = Instant.parse("2026-11-29T07:00:00Z");
    final Clock clock = Clock.fixed(NOW, ZoneOffset.UTC);

    @TempDir
    Path dir;

    /** Answers polls from a script (then an empty page) and records every request. */
    static final class Script implements FeedTransport {
        final Deque<Transport.Response> pages = new ArrayDeque<>();
        final Deque<Transport.Response> ackAnswers = new ArrayDeque<>();
        final List<String> polledAfter = new ArrayList<>();
        final List<JsonObject> acks = new ArrayList<>();

        @Override
        public Transport.Response poll(String after, int waitSeconds, Duration timeout) {
            polledAfter.add(after);
            Transport.Response r = pages.poll();
            return r != null ? r : new Transport.Response(200, -1, "{\"actions\":[],\"cursor\":" + (after == null ? "null" : "\"" + after + "\"") + "}");
        }

        @Override
        public Transport.Response ack(String json, Duration timeout) throws IOException {
            acks.add(JsonParser.parseString(json).getAsJsonObject());
            Transport.Response r = ackAnswers.poll();
            if (r != null && r.status() == 0) {
                throw new IOException("connection refused");
            }
            return r != null ? r : new Transport.Response(202, -1, "{}");
        }

        void page(JsonObject... actions) {
            JsonArray a = new JsonArray();
            for (JsonObject o : actions) {
                a.add(o);
            }
            JsonObject p = new JsonObject();
            p.add("actions", a);
            p.addProperty("cursor", actions.length == 0 ? null : actions[actions.length - 1].get("cursor").getAsString());
            pages.add(new Transport.Response(200, -1, p.toString()));
        }

        List<String> outcomes() {
            List<String> out = new ArrayList<>();
            acks.forEach(a -> a.getAsJsonArray("results").forEach(r -> out.add(
                    r.getAsJsonObject().get("action_id").getAsString().substring(33) + ":" + r.getAsJsonObject().get("outcome").getAsString())));
            return out;
        }
    }

    /** Records the platform calls. */
    static final class Platform implements Enforcer {
        final List<String> calls = new ArrayList<>();
        boolean online = true;

        @Override
        public Outcome kick(UUID player, String message) {
            calls.add("kick " + message);
            return online ? Outcome.APPLIED : Outcome.NOT_ONLINE;
        }

        @Override
        public Outcome message(UUID player, String message) {
            calls.add("message " + message);
            return online ? Outcome.APPLIED : Outcome.NOT_ONLINE;
        }
    }

    static UUID id(int n) {
        return UUID.fromString(String.format("0190a5f2-0000-7000-8000-%012d", n));
    }

    static JsonObject issue(int n, String type, String reason, Instant expires, String scope, Instant at) {
        JsonObject p = new JsonObject();
        p.addProperty("type", type);
        p.addProperty("player_uuid", NOTCH.toString());
        p.addProperty("player_name", "Notch");
        p.addProperty("reason", reason);
        p.addProperty("expires_at", expires == null ? null : expires.toString());
        p.addProperty("scope", scope);
        JsonObject o = new JsonObject();
        o.addProperty("cursor", String.valueOf(100 + n));
        o.addProperty("id", id(n).toString());
        o.addProperty("type", "issue");
        o.add("punishment", p);
        JsonObject by = new JsonObject();
        by.addProperty("member_id", "m1");
        by.addProperty("name", "Alice");
        o.add("by", by);
        o.addProperty("at", at.toString());
        return o;
    }

    static JsonObject revoke(int n, int target, String type) {
        JsonObject r = new JsonObject();
        r.addProperty("punishment_id", id(target).toString());
        r.addProperty("player_uuid", NOTCH.toString());
        r.addProperty("type", type);
        r.addProperty("source_plugin", "warden");
        r.addProperty("external_id", id(target).toString());
        JsonObject o = new JsonObject();
        o.addProperty("cursor", String.valueOf(100 + n));
        o.addProperty("id", id(n).toString());
        o.addProperty("type", "revoke");
        o.add("revoke", r);
        o.addProperty("at", NOW.toString());
        return o;
    }

    ActionFeed feed(Sanctions sanctions, Platform platform, Script script, String group) throws IOException {
        FeedState state = FeedState.load(dir, sanctions);
        return new ActionFeed(state, sanctions, platform, SERVER, new EnforcementConfig(true, group, 0), script, 60,
                clock, Logger.getLogger("test"));
    }

    @Test
    void aBanGoesOnTheListKicksAndIsAcknowledgedAndSaved() throws Exception {
        Sanctions sanctions = new Sanctions();
        Platform platform = new Platform();
        Script script = new Script();
        script.page(issue(1, "ban", "cheating", null, "global", NOW));
        ActionFeed feed = feed(sanctions, platform, script, null);
        assertEquals(0, feed.step(0));
        assertNotNull(sanctions.ban(NOTCH, NOW));
        assertEquals(List.of("kick You are banned from this server: cheating"), platform.calls);
        assertEquals(List.of("001:applied"), script.outcomes());
        assertEquals(SERVER.toString(), script.acks.get(0).get("server_id").getAsString());
        assertEquals("101", feed.status().cursor());
        assertEquals(1, feed.status().bans());
        String lines = String.join("\n", dev.warden.plugin.core.StatusText.feedLines(feed.status(), NOW.plusSeconds(5)));
        assertTrue(lines.contains("actions: connected, cursor 101"), lines);
        assertTrue(lines.contains("last action: ban of Notch (applied) (5 s ago)"), lines);
        assertTrue(lines.contains("known: 1 ban(s), 0 mute(s)"), lines);

        // A restart: the list and the cursor come back from the data folder.
        Sanctions again = new Sanctions();
        Script after = new Script();
        ActionFeed restarted = feed(again, new Platform(), after, null);
        assertNotNull(again.ban(NOTCH, NOW), "the ban is enforced before the feed answers");
        restarted.step(0);
        assertEquals("101", after.polledAfter.get(0));
    }

    @Test
    void anActionDeliveredTwiceIsAppliedOnce() throws Exception {
        Platform platform = new Platform();
        Script script = new Script();
        script.page(issue(1, "kick", "spam", null, "global", NOW));
        script.page(issue(1, "kick", "spam", null, "global", NOW));
        ActionFeed feed = feed(new Sanctions(), platform, script, null);
        feed.step(0);
        feed.step(0);
        assertEquals(1, platform.calls.size());
        assertEquals(List.of("001:applied"), script.outcomes());
    }

    @Test
    void scopeExpiryStalenessAndRevokes() throws Exception {
        Sanctions sanctions = new Sanctions();
        Platform platform = new Platform();
        platform.online = false;
        Script script = new Script();
        script.page(issue(1, "ban", "x", null, "minigames", NOW),
                issue(2, "mute", "caps", NOW.plusSeconds(3600), "survival", NOW),
                issue(3, "ban", "old", NOW.minusSeconds(1), "global", NOW.minusSeconds(7200)),
                issue(4, "kick", "old", null, "global", NOW.minus(ActionFeed.STALE_AFTER).minusSeconds(1)),
                issue(5, "warning", "language", null, "global", NOW));
        ActionFeed feed = feed(sanctions, platform, script, "survival");
        feed.step(0);
        assertEquals(List.of("001:skipped", "002:applied", "003:skipped", "004:skipped", "005:not_online"), script.outcomes());
        assertNull(sanctions.ban(NOTCH, NOW));
        Sanctions.Entry mute = sanctions.mute(NOTCH, NOW);
        assertNotNull(mute);
        assertNull(sanctions.mute(NOTCH, NOW.plusSeconds(3601)), "an expired mute drops out");
        assertTrue(ActionFeed.muteMessage(mute).contains("caps"));

        script.page(revoke(6, 2, "mute"), revoke(7, 99, "ban"));
        feed.step(0);
        assertNull(sanctions.mute(NOTCH, NOW));
        assertEquals(List.of("006:applied", "007:skipped"), script.outcomes().subList(5, 7));
        assertEquals(0, feed.status().mutes());
    }

    @Test
    void acksThatFailAreKeptAndSentLater() throws Exception {
        Platform platform = new Platform();
        Script script = new Script();
        script.page(issue(1, "warning", "be nice", null, "global", NOW));
        script.ackAnswers.add(new Transport.Response(503, -1, "{\"code\":\"unavailable\"}"));
        ActionFeed feed = feed(new Sanctions(), platform, script, null);
        assertTrue(feed.step(0) > 0, "a 503 backs off");
        assertEquals(1, feed.status().pendingAcks());

        // Saved: a restart sends it before reading on.
        Script after = new Script();
        ActionFeed restarted = feed(new Sanctions(), new Platform(), after, null);
        assertEquals(0, restarted.step(0));
        assertEquals(List.of("001:applied"), after.outcomes());
        assertEquals(0, restarted.status().pendingAcks());
        assertTrue(Files.readString(dir.resolve(FeedState.FILE_NAME)).contains("\"pending_acks\":[]"));
    }

    @Test
    void aRefusedKeyWaitsAMinuteAndTheListsHold() throws Exception {
        Sanctions sanctions = new Sanctions();
        Script script = new Script();
        script.page(issue(1, "ban", "x", null, "global", NOW));
        ActionFeed feed = feed(sanctions, new Platform(), script, null);
        feed.step(0);
        script.pages.add(new Transport.Response(401, -1, "{\"code\":\"unauthorized\"}"));
        assertEquals(60_000, feed.step(0));
        assertEquals("key refused", feed.status().connection());
        script.pages.add(new Transport.Response(502, -1, ""));
        assertTrue(feed.step(0) >= 500);
        assertNotNull(sanctions.ban(NOTCH, NOW), "bans already known are still enforced");
    }
}
