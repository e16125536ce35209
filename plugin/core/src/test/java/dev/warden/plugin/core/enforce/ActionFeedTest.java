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
        final Deque<Transport.Response> linkAnswers = new ArrayDeque<>();
        final List<JsonObject> linkRequests = new ArrayList<>();

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

        @Override
        public Transport.Response appealLinks(String json, Duration timeout) {
            linkRequests.add(JsonParser.parseString(json).getAsJsonObject());
            Transport.Response r = linkAnswers.poll();
            return r != null ? r : new Transport.Response(200, -1, "{\"links\":[]}");
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
        return feed(sanctions, platform, script, group, clock);
    }

    ActionFeed feed(Sanctions sanctions, Platform platform, Script script, String group, Clock at) throws IOException {
        FeedState state = FeedState.load(dir, sanctions);
        return new ActionFeed(state, sanctions, platform, SERVER, new EnforcementConfig(true, group, 0), script, 60,
                at, Logger.getLogger("test"));
    }

    /** A clock the test moves. */
    static final class Moving extends Clock {
        Instant now = NOW;

        @Override
        public Instant instant() {
            return now;
        }

        @Override
        public java.time.ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }
    }

    static final String LINK = "https://warden.example.net/appeal/";

    static JsonObject appeal(String token, Instant expires) {
        JsonObject a = new JsonObject();
        a.addProperty("url", LINK + token);
        a.addProperty("expires_at", expires.toString());
        return a;
    }

    static JsonObject withAppeal(JsonObject action, String token, Instant expires) {
        action.add("appeal", appeal(token, expires));
        return action;
    }

    static Transport.Response links(int n, String token, Instant expires) {
        JsonObject link = appeal(token, expires);
        link.addProperty("punishment_id", id(n).toString());
        JsonArray list = new JsonArray();
        list.add(link);
        JsonObject o = new JsonObject();
        o.add("links", list);
        return new Transport.Response(200, -1, o.toString());
    }

    List<String> asked(Script script) {
        List<String> out = new ArrayList<>();
        script.linkRequests.forEach(r -> r.getAsJsonArray("punishment_ids").forEach(e -> out.add(e.getAsString().substring(33))));
        return out;
    }

    @Test
    void aBansAppealLinkIsReadKeptAndShownUntilItExpires() throws Exception {
        Instant expires = NOW.plus(Duration.ofDays(30));
        Action parsed = Action.parse(withAppeal(issue(1, "ban", "x", null, "global", NOW), "tok1", expires));
        assertEquals(new AppealLink(LINK + "tok1", expires), parsed.punishment().appeal());
        for (String bad : new String[] {"javascript:alert(1)", "https://a b", "ftp://x"}) {
            JsonObject o = issue(1, "ban", "x", null, "global", NOW);
            JsonObject a = new JsonObject();
            a.addProperty("url", bad);
            a.addProperty("expires_at", expires.toString());
            o.add("appeal", a);
            assertNull(Action.parse(o).punishment().appeal(), bad);
        }
        JsonObject broken = issue(1, "ban", "x", null, "global", NOW);
        broken.addProperty("appeal", "not an object");
        assertNull(Action.parse(broken).punishment().appeal(), "a bad link never stops the ban");
        JsonObject noTime = issue(1, "ban", "x", null, "global", NOW);
        JsonObject a = new JsonObject();
        a.addProperty("url", LINK + "t");
        a.addProperty("expires_at", "soon");
        noTime.add("appeal", a);
        assertNull(Action.parse(noTime).punishment().appeal());

        Sanctions sanctions = new Sanctions();
        Platform platform = new Platform();
        Script script = new Script();
        script.page(withAppeal(issue(1, "ban", "cheating", null, "global", NOW), "tok1", expires),
                withAppeal(issue(2, "mute", "caps", null, "global", NOW), "tok2", expires));
        ActionFeed feed = feed(sanctions, platform, script, null);
        feed.step(0);
        assertEquals(List.of("kick You are banned from this server: cheating\nAppeal at " + LINK + "tok1"), platform.calls.subList(0, 1));
        Sanctions.Entry ban = sanctions.ban(NOTCH, NOW);
        assertEquals(LINK + "tok1", ban.appeal().url());
        assertNull(sanctions.mute(NOTCH, NOW).appeal(), "only bans keep a link");
        assertEquals("You are banned from this server: cheating\nAppeal at " + LINK + "tok1", ActionFeed.banMessage(ban, NOW));
        assertEquals("You are banned from this server: cheating",
                ActionFeed.banMessage(ban, expires), "an expired link is not shown");
        assertEquals("You are banned from this server.",
                ActionFeed.banMessage(new Sanctions.Entry(id(9), "ban", NOTCH, "Notch", null, null, NOW), NOW));

        // Saved with the list: a restart shows the same link.
        Sanctions again = new Sanctions();
        feed(again, new Platform(), new Script(), null);
        assertEquals(new AppealLink(LINK + "tok1", expires), again.ban(NOTCH, NOW).appeal());
    }

    @Test
    void linksNearExpiryAreRefreshedInOneRequestAtMostHourlyAndSaved() throws Exception {
        Moving at = new Moving();
        Sanctions sanctions = new Sanctions();
        Script script = new Script();
        script.page(withAppeal(issue(1, "ban", "a", null, "global", NOW), "old1", NOW.plus(Duration.ofDays(2))),
                withAppeal(issue(2, "ban", "b", null, "global", NOW), "fresh", NOW.plus(Duration.ofDays(30))),
                issue(3, "ban", "c", null, "global", NOW),
                withAppeal(issue(4, "mute", "d", null, "global", NOW), "mute", NOW.plusSeconds(60)));
        Instant renewed = NOW.plus(Duration.ofDays(30));
        script.linkAnswers.add(links(1, "new1", renewed));
        ActionFeed feed = feed(sanctions, new Platform(), script, null, at);
        feed.step(0);
        assertEquals(List.of("001", "003"), asked(script).stream().sorted().toList(),
                "one request for the link near expiry and the missing one; not the fresh one, not the mute");
        assertEquals(1, script.linkRequests.size());
        assertEquals(new AppealLink(LINK + "new1", renewed), sanctions.entries().stream()
                .filter(e -> e.punishmentId().equals(id(1))).findFirst().orElseThrow().appeal());
        assertTrue(Files.readString(dir.resolve(FeedState.FILE_NAME)).contains(LINK + "new1"), "saved");

        // Within the hour nothing is asked again (ban 3 got no link); after it, ban 3 is.
        at.now = NOW.plus(Duration.ofMinutes(59));
        feed.step(0);
        assertEquals(1, script.linkRequests.size());
        at.now = NOW.plus(Duration.ofMinutes(61));
        script.linkAnswers.add(new Transport.Response(503, -1, "{\"code\":\"unavailable\"}"));
        feed.step(0);
        assertEquals(List.of("003"), asked(script).subList(2, 3));
        assertNotNull(sanctions.ban(NOTCH, at.now), "a failed refresh leaves the list as it is");
        assertNull(sanctions.entries().stream().filter(e -> e.punishmentId().equals(id(3))).findFirst().orElseThrow().appeal());

        // A link that nears its expiry later is refreshed then.
        at.now = NOW.plus(Duration.ofDays(28));
        feed.step(0);
        assertTrue(asked(script).subList(3, asked(script).size()).containsAll(List.of("001", "002", "003")), asked(script).toString());
    }

    @Test
    void aFileWrittenBeforeAppealLinksStillLoads() throws Exception {
        Files.writeString(dir.resolve(FeedState.FILE_NAME), "{\"version\":1,\"cursor\":\"101\",\"applied\":[\""
                + id(1) + "\"],\"pending_acks\":[],\"sanctions\":[{\"punishment_id\":\"" + id(1)
                + "\",\"type\":\"ban\",\"player_uuid\":\"" + NOTCH + "\",\"player_name\":\"Notch\",\"reason\":\"x\","
                + "\"expires_at\":null,\"issued_at\":\"" + NOW + "\"}]}");
        Sanctions sanctions = new Sanctions();
        Script script = new Script();
        script.linkAnswers.add(links(1, "got", NOW.plus(Duration.ofDays(30))));
        ActionFeed feed = feed(sanctions, new Platform(), script, null);
        Sanctions.Entry ban = sanctions.ban(NOTCH, NOW);
        assertNotNull(ban);
        assertNull(ban.appeal());
        assertEquals("You are banned from this server: x", ActionFeed.banMessage(ban, NOW));
        feed.step(0);
        assertEquals(List.of("001"), asked(script), "a ban without a link gets one");
        assertEquals(LINK + "got", sanctions.ban(NOTCH, NOW).appeal().url());
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
