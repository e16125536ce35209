package dev.warden.plugin.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import dev.warden.plugin.core.enforce.ActionFeed;
import dev.warden.plugin.core.enforce.EnforcementConfig;
import dev.warden.plugin.core.enforce.Enforcer;
import dev.warden.plugin.core.enforce.Outcome;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * The dashboard's actions against a real stack: actions written to the event log as query-api
 * writes them reach two plugin cores through {@code GET /api/plugin/actions}; both put a ban on
 * their list (so both refuse the player's login) and kick the player; a scoped mute applies only
 * on the server of that group; across a kill of the stack and a restart of one core, every
 * action is applied once per server, and every outcome is acknowledged. And the whole appeal: a
 * moderator's ban from the dashboard reaches both cores with a link to the appeal form on the kick
 * and login messages; the player appeals there, the moderator accepts in the inbox, and both
 * cores lift the ban.
 *
 * <p>Run by {@code deploy/plugin_contract.sh} (WARDEN_IT_* variables; WARDEN_IT_NATS_URL for the
 * writes). Skipped without them.
 */
@EnabledIfEnvironmentVariable(named = "WARDEN_IT_STACK_CMD", matches = ".+")
class EnforcementIT extends CoresOnAStack {
    static final String NATS = System.getenv("WARDEN_IT_NATS_URL");
    /** The stack's stream partitions (EVENT_PARTITIONS is not set: the default). */
    static final int PARTITIONS = 8;


    EnforcementIT() {
        super("enforcement-it");
    }

    /** What the platform was asked to do, per server. */
    static final class Recorder implements Enforcer {
        final List<String> calls = new CopyOnWriteArrayList<>();

        @Override
        public Outcome kick(UUID player, String message) {
            calls.add("kick " + message);
            return Outcome.APPLIED;
        }

        @Override
        public Outcome message(UUID player, String message) {
            calls.add("message " + message);
            return Outcome.APPLIED;
        }
    }

    WardenCore core(String folder, String pluginKey, String group, Recorder recorder) throws IOException {
        WardenCore core = new WardenCore(root.resolve(folder), config(folder, pluginKey), ContractIT.STATS, logger);
        core.start();
        core.startEnforcement(new EnforcementConfig(true, group, 2), recorder);
        cores.add(core);
        return core;
    }

    /** Appends an `action` record to the log as query-api's pages do; returns the action's id. */
    static UUID writeAction(UUID account, JsonObject record) throws IOException {
        UUID id = UuidV7.at(Instant.now());
        record.addProperty("id", id.toString());
        JsonObject logged = new JsonObject();
        logged.addProperty("id", id.toString());
        logged.add("record", record);
        JsonArray records = new JsonArray();
        records.add(logged);
        JsonObject batch = new JsonObject();
        batch.addProperty("kind", "action");
        batch.add("records", records);
        JsonObject message = new JsonObject();
        message.addProperty("v", 1);
        message.addProperty("account_id", account.toString());
        message.addProperty("received_at", Instant.now().toString());
        message.add("batch", batch);
        String subject = "gs.part." + NatsPublish.partition(account, PARTITIONS) + "." + account + ".action";
        try (NatsPublish nats = new NatsPublish(NATS)) {
            String ack = nats.publish(subject, "action:" + account + ":" + id, message.toString().getBytes(StandardCharsets.UTF_8));
            assertTrue(ack.contains("\"seq\""), ack);
        }
        return id;
    }

    static JsonObject issue(String type, UUID player, String reason, Instant expires, String scope) {
        JsonObject p = new JsonObject();
        p.addProperty("type", type);
        p.addProperty("player_uuid", player.toString());
        p.addProperty("player_name", "Enforced");
        p.addProperty("reason", reason);
        p.addProperty("expires_at", expires == null ? null : expires.toString());
        p.addProperty("scope", scope);
        JsonObject o = new JsonObject();
        o.addProperty("type", "issue");
        o.add("punishment", p);
        o.add("by", by());
        o.addProperty("at", Instant.now().toString());
        return o;
    }

    static JsonObject revoke(UUID target, UUID player, String type) {
        JsonObject r = new JsonObject();
        r.addProperty("punishment_id", target.toString());
        r.addProperty("player_uuid", player.toString());
        r.addProperty("type", type);
        r.addProperty("source_plugin", "warden");
        r.addProperty("external_id", target.toString());
        r.addProperty("reason", "appeal accepted");
        JsonObject o = new JsonObject();
        o.addProperty("type", "revoke");
        o.add("revoke", r);
        o.add("by", by());
        o.addProperty("at", Instant.now().toString());
        return o;
    }

    static JsonObject by() {
        JsonObject by = new JsonObject();
        by.addProperty("member_id", UUID.randomUUID().toString());
        by.addProperty("name", "Alice");
        return by;
    }

    @Test
    void aWebBanReachesTwoServersAndEveryActionIsAppliedOncePerServerAcrossRestarts() throws Exception {
        startStack();
        UUID account = UUID.fromString(ContractIT.call("POST", "/api/admin/accounts", ADMIN, "{\"name\":\"enforcement\"}")
                .getAsJsonObject().get("id").getAsString());
        String pluginKey = ContractIT.call("POST", "/api/admin/accounts/" + account + "/keys", ADMIN,
                "{\"kind\":\"plugin\",\"label\":\"enforcement\"}").getAsJsonObject().get("key").getAsString();
        UUID player = UuidV7.at(Instant.now());

        Recorder survivalCalls = new Recorder();
        Recorder lobbyCalls = new Recorder();
        WardenCore survival = core("survival", pluginKey, "survival", survivalCalls);
        WardenCore lobby = core("lobby", pluginKey, null, lobbyCalls);

        // A web ban (global, a day) and a mute scoped to the survival group.
        UUID ban = writeAction(account, issue("ban", player, "griefing", Instant.now().plusSeconds(86_400), "global"));
        writeAction(account, issue("mute", player, "spam", null, "survival"));
        ContractIT.waitFor("both servers to know the ban", Duration.ofSeconds(60),
                () -> survival.sanctions().ban(player, Instant.now()) != null && lobby.sanctions().ban(player, Instant.now()) != null);
        ContractIT.waitFor("the survival server to know the mute", Duration.ofSeconds(30),
                () -> survival.sanctions().mute(player, Instant.now()) != null);
        assertEquals("griefing", lobby.sanctions().ban(player, Instant.now()).reason());
        assertNull(lobby.sanctions().mute(player, Instant.now()), "the mute is scoped to survival");
        assertTrue(survivalCalls.calls.get(0).startsWith("kick You are banned from this server until "), survivalCalls.calls.toString());
        assertTrue(lobbyCalls.calls.get(0).startsWith("kick You are banned from this server until "), lobbyCalls.calls.toString());
        ContractIT.waitFor("both servers to acknowledge", Duration.ofSeconds(30),
                () -> survival.feedStatus().pendingAcks() == 0 && lobby.feedStatus().pendingAcks() == 0
                        && survival.feedStatus().lastAction() != null && lobby.feedStatus().lastAction() != null);

        // The outage: the stack dies, the survival server restarts meanwhile. Its lists come back
        // from its data folder: the ban is enforced with Warden unreachable.
        stack.destroyForcibly();
        stack.waitFor();
        stack = null;
        survival.shutdown(0);
        cores.remove(survival);
        Recorder restartedCalls = new Recorder();
        WardenCore restarted = core("survival", pluginKey, "survival", restartedCalls);
        assertNotNull(restarted.sanctions().ban(player, Instant.now()), "the ban holds across the restart, offline");
        assertNotNull(restarted.sanctions().mute(player, Instant.now()));
        startStack();

        // A kick after the outage, then the ban's revoke: each applied once on each server.
        writeAction(account, issue("kick", player, "afk", null, "global"));
        writeAction(account, revoke(ban, player, "ban"));
        ContractIT.waitFor("both servers to lift the ban", Duration.ofSeconds(60),
                () -> restarted.sanctions().ban(player, Instant.now()) == null && lobby.sanctions().ban(player, Instant.now()) == null);
        assertEquals(List.of("kick Kicked: afk"), restartedCalls.calls, "nothing from before the restart is applied again");
        assertEquals(2, lobbyCalls.calls.size(), lobbyCalls.calls.toString());
        assertEquals("kick Kicked: afk", lobbyCalls.calls.get(1));
        assertEquals(1, survivalCalls.calls.stream().filter(c -> c.startsWith("kick You are banned")).count());

        ContractIT.waitFor("every ack accepted", Duration.ofSeconds(30),
                () -> restarted.feedStatus().pendingAcks() == 0 && lobby.feedStatus().pendingAcks() == 0);
    }

    /** A dashboard page request as a browser sends it: the session cookie, and this origin on a POST. */
    static HttpResponse<String> page(String method, String path, String cookie, Map<String, String> form) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(path.startsWith("http") ? path : BASE + path))
                .timeout(Duration.ofSeconds(10));
        if (cookie != null) {
            b.header("Cookie", cookie);
        }
        if (form == null) {
            b.method(method, HttpRequest.BodyPublishers.noBody());
        } else {
            StringBuilder body = new StringBuilder();
            form.forEach((k, v) -> body.append(body.length() == 0 ? "" : "&")
                    .append(URLEncoder.encode(k, StandardCharsets.UTF_8)).append('=')
                    .append(URLEncoder.encode(v, StandardCharsets.UTF_8)));
            b.header("Origin", BASE).header("Content-Type", "application/x-www-form-urlencoded")
                    .method(method, HttpRequest.BodyPublishers.ofString(body.toString()));
        }
        return ContractIT.HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    static Map<String, String> form(String... pairs) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i + 1 < pairs.length; i += 2) {
            m.put(pairs[i], pairs[i + 1]);
        }
        return m;
    }

    static void assertStatus(int expected, HttpResponse<String> r) {
        assertEquals(expected, r.statusCode(), r.request().method() + " " + r.uri() + ": " + r.body());
    }

    /** The appeal link on a ban message ("... Appeal at <url>"), or null. */
    static String appealLink(String message) {
        Matcher m = Pattern.compile("\nAppeal at (\\S+)$").matcher(message);
        return m.find() ? m.group(1) : null;
    }

    @Test
    void aDashboardBanCarriesAnAppealLinkAndAnAcceptedAppealLiftsItOnEveryServer() throws Exception {
        startStack();
        UUID account = UUID.fromString(ContractIT.call("POST", "/api/admin/accounts", ADMIN, "{\"name\":\"appeals\"}")
                .getAsJsonObject().get("id").getAsString());
        String pluginKey = ContractIT.call("POST", "/api/admin/accounts/" + account + "/keys", ADMIN,
                "{\"kind\":\"plugin\",\"label\":\"appeals\"}").getAsJsonObject().get("key").getAsString();
        String dashKey = ContractIT.call("POST", "/api/admin/accounts/" + account + "/keys", ADMIN,
                "{\"kind\":\"dashboard\"}").getAsJsonObject().get("key").getAsString();
        String login = "mod-" + UUID.randomUUID() + "@example.com";
        String password = "appeal-flow-" + UUID.randomUUID();
        ContractIT.call("POST", "/api/admin/accounts/" + account + "/members", ADMIN,
                "{\"login\":\"" + login + "\",\"display_name\":\"Mo\",\"role\":\"moderator\",\"password\":\"" + password + "\"}");

        // Sign in as the moderator; keep the session cookie (name=value of Set-Cookie).
        HttpResponse<String> signIn = page("POST", "/login", null, form("login", login, "password", password));
        assertStatus(303, signIn);
        String cookie = signIn.headers().firstValue("Set-Cookie").orElseThrow().split(";", 2)[0];

        Recorder survivalCalls = new Recorder();
        Recorder lobbyCalls = new Recorder();
        WardenCore survival = core("appeal-survival", pluginKey, "survival", survivalCalls);
        WardenCore lobby = core("appeal-lobby", pluginKey, null, lobbyCalls);

        // The player joins the survival server: the dashboard knows them.
        UUID player = UuidV7.at(Instant.now());
        survival.capture().join(player, "Appellant", "203.0.113.20", "protocol 769");
        ContractIT.waitFor("the dashboard to know the player", Duration.ofSeconds(60), () -> {
            try {
                HttpResponse<String> r = ContractIT.HTTP.send(HttpRequest.newBuilder(URI.create(BASE + "/api/players/" + player))
                        .header("Authorization", "Bearer " + dashKey).timeout(Duration.ofSeconds(5)).build(),
                        HttpResponse.BodyHandlers.ofString());
                return r.statusCode() == 200;
            } catch (IOException | InterruptedException e) {
                return false;
            }
        });

        // The moderator bans them from the dashboard (a week, every server).
        assertStatus(303, page("POST", "/players/" + player + "/punishments", cookie,
                form("type", "ban", "length", "7d", "reason", "griefing", "scope", "global", "action_id", "")));
        ContractIT.waitFor("both servers to know the ban", Duration.ofSeconds(60),
                () -> survival.sanctions().ban(player, Instant.now()) != null && lobby.sanctions().ban(player, Instant.now()) != null);

        // Both refuse the login with the link (the message LoginGuard gives), and kicked with it.
        String link = null;
        for (WardenCore core : List.of(survival, lobby)) {
            Instant now = Instant.now();
            String refusal = ActionFeed.banMessage(core.sanctions().ban(player, now), now);
            assertTrue(refusal.startsWith("You are banned from this server until "), refusal);
            assertTrue(refusal.contains(": griefing\nAppeal at " + BASE + "/appeal/"), refusal);
            String own = appealLink(refusal);
            assertNotNull(own, refusal);
            link = link == null ? own : link;
        }
        for (Recorder calls : List.of(survivalCalls, lobbyCalls)) {
            assertTrue(calls.calls.get(0).startsWith("kick You are banned from this server until ")
                    && appealLink(calls.calls.get(0)) != null, calls.calls.toString());
        }

        // The player opens the link and appeals.
        HttpResponse<String> formPage = page("GET", link, null, null);
        assertStatus(200, formPage);
        assertTrue(formPage.body().contains("<form"), formPage.body());
        assertStatus(303, page("POST", link, null, form("message", "I was not griefing, it was my brother.", "website", "")));
        HttpResponse<String> sent = page("GET", link, null, null);
        assertStatus(200, sent);
        assertTrue(sent.body().contains("data-appeal-status=\"new\""), sent.body());

        // The moderator finds it in the inbox and accepts it.
        String[] appealId = new String[1];
        ContractIT.waitFor("the appeal in the inbox", Duration.ofSeconds(30), () -> {
            try {
                HttpResponse<String> inbox = page("GET", "/appeals", cookie, null);
                Matcher m = Pattern.compile("/appeals/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})")
                        .matcher(inbox.body());
                if (inbox.statusCode() == 200 && m.find()) {
                    appealId[0] = m.group(1);
                    return true;
                }
                return false;
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        assertStatus(303, page("POST", "/appeals/" + appealId[0] + "/decision", cookie,
                form("step", "accepted", "reply", "Accepted: welcome back.", "action_id", "")));

        // Both servers lift the ban; the link's page says the appeal was accepted.
        ContractIT.waitFor("both servers to lift the ban", Duration.ofSeconds(60),
                () -> survival.sanctions().ban(player, Instant.now()) == null && lobby.sanctions().ban(player, Instant.now()) == null);
        String finalLink = link;
        ContractIT.waitFor("the link's page to show the acceptance", Duration.ofSeconds(30), () -> {
            try {
                return page("GET", finalLink, null, null).body().contains("data-appeal-status=\"accepted\"");
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        ContractIT.waitFor("every ack accepted", Duration.ofSeconds(30),
                () -> survival.feedStatus().pendingAcks() == 0 && lobby.feedStatus().pendingAcks() == 0);
    }
}
