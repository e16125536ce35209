package dev.warden.plugin.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.warden.plugin.core.proxy.BackendIds;
import dev.warden.plugin.core.proxy.NetworkSessions;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cross-language contract test: the plugin core sends every record kind to a real Warden stack
 * (ingest, the event log on nats-server, the projector, PostgreSQL, query-api) and each is read
 * back through the dashboard API. In the middle the stack is killed, the plugin is restarted while
 * it is down, and the stack comes back: nothing is lost and nothing is stored twice.
 *
 * <p>Run by {@code deploy/plugin_contract.sh}, which builds the stack and sets:
 * WARDEN_IT_STACK_CMD (a script that runs the stack in the foreground), WARDEN_IT_BASE_URL and
 * WARDEN_IT_ADMIN_KEY. Skipped without them.
 */
@EnabledIfEnvironmentVariable(named = "WARDEN_IT_STACK_CMD", matches = ".+")
class ContractIT {
    static final String BASE = System.getenv("WARDEN_IT_BASE_URL");
    static final String ADMIN = System.getenv("WARDEN_IT_ADMIN_KEY");
    static final HttpClient HTTP = HttpClient.newHttpClient();

    @TempDir
    Path dataFolder;

    Process stack;
    final Logger logger = Logger.getLogger("contract-it");

    @AfterEach
    void stopStack() throws Exception {
        if (stack != null) {
            stack.destroy();
            stack.waitFor();
        }
    }

    void startStack() throws Exception {
        stack = launchStack();
    }

    /**
     * Starts the stack ({@code WARDEN_IT_STACK_CMD}, its output appended to
     * {@code WARDEN_IT_STACK_LOG}) and waits for its {@code /readyz}: every IT's stack.
     */
    static Process launchStack() throws Exception {
        File log = new File(System.getenv().getOrDefault("WARDEN_IT_STACK_LOG", "/dev/null"));
        Process process = new ProcessBuilder(System.getenv("WARDEN_IT_STACK_CMD"))
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log))
                .start();
        waitFor("the stack's /readyz", Duration.ofSeconds(120), () -> {
            if (!process.isAlive()) {
                throw new AssertionError("the stack exited with " + process.exitValue() + " (log: " + log + ")");
            }
            try {
                return HTTP.send(HttpRequest.newBuilder(URI.create(BASE + "/readyz")).timeout(Duration.ofSeconds(2)).build(),
                        HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
            } catch (IOException | InterruptedException e) {
                return false;
            }
        });
        return process;
    }

    /** The outage: the whole stack is killed at once (no graceful stop). */
    void killStack() throws Exception {
        stack.destroyForcibly();
        stack.waitFor();
        stack = null;
    }

    static void waitFor(String what, Duration limit, BooleanSupplier done) throws InterruptedException {
        Instant deadline = Instant.now().plus(limit);
        while (!done.getAsBoolean()) {
            if (Instant.now().isAfter(deadline)) {
                throw new AssertionError("timed out after " + limit.toSeconds() + " s waiting for " + what);
            }
            Thread.sleep(250);
        }
    }

    static JsonElement call(String method, String path, String key, String body) throws Exception {
        while (true) {
            HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(BASE + path)).timeout(Duration.ofSeconds(10))
                    .header("Authorization", "Bearer " + key);
            if (body != null) {
                b.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(body));
            } else {
                b.method(method, HttpRequest.BodyPublishers.noBody());
            }
            HttpResponse<String> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() == 429) { // the dashboard key's quota: wait as told
                long wait = r.headers().firstValue("Retry-After").map(Long::parseLong).orElse(1L);
                Thread.sleep(wait * 1000 + 100);
                continue;
            }
            if (r.statusCode() / 100 != 2) {
                throw new AssertionError(method + " " + path + " answered " + r.statusCode() + ": " + r.body());
            }
            return r.body().isEmpty() ? null : JsonParser.parseString(r.body());
        }
    }

    WardenConfig config(String pluginKey) {
        WardenConfig d = WardenConfig.defaults(BASE, pluginKey);
        // A 1 s cycle and at most 2 s between attempts keep the test short.
        return new WardenConfig(BASE, pluginKey, 1, "contract-test", 10_000, 64, 8, 3, 5, 2,
                true, true, true, true, true, true, "global", d.redactCommands(), List.of());
    }

    static final ServerStats STATS = new ServerStats() {
        @Override
        public double tps() {
            return 19.8;
        }

        @Override
        public int playerCount() {
            return 1;
        }

        @Override
        public int maxPlayers() {
            return 100;
        }

        @Override
        public String version() {
            return "Paper 1.21.4";
        }

        @Override
        public String defaultName() {
            return "unused";
        }
    };

    /** Until a sync cycle run on the delivery thread leaves nothing queued or spooled. */
    static void drained(WardenCore core) throws InterruptedException {
        waitFor("the plugin to deliver everything", Duration.ofSeconds(60), () -> {
            try {
                Status s = core.syncNow().get();
                return s.queued() == 0 && s.spoolBatches() == 0 && "connected".equals(s.connection());
            } catch (java.util.concurrent.ExecutionException e) {
                throw new AssertionError(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        });
    }

    @Test
    void everyRecordKindReachesTheDashboardApiThroughAnOutage() throws Exception {
        startStack();
        String account = call("POST", "/api/admin/accounts", ADMIN, "{\"name\":\"plugin contract\"}")
                .getAsJsonObject().get("id").getAsString();
        String pluginKey = call("POST", "/api/admin/accounts/" + account + "/keys", ADMIN,
                "{\"kind\":\"plugin\",\"label\":\"contract\"}").getAsJsonObject().get("key").getAsString();
        String dashKey = call("POST", "/api/admin/accounts/" + account + "/keys", ADMIN,
                "{\"kind\":\"dashboard\"}").getAsJsonObject().get("key").getAsString();

        UUID player = UuidV7.at(Instant.now());
        Set<String> chats = new HashSet<>();
        List<String> eventIds = new ArrayList<>();

        // ---- Phase 1: the stack is up; one of every kind. ----
        WardenCore core = new WardenCore(dataFolder, config(pluginKey), STATS, logger);
        UUID serverId = core.serverId();
        core.start();
        Capture c = core.capture();
        c.join(player, "Contract", "203.0.113.9", "protocol 769");
        c.chat(player, "Contract", "hello from java");
        chats.add("hello from java");
        c.command(player, "Contract", "/login hunter2");
        chats.add("/login [redacted]");
        c.command(player, "Contract", "/spawn");
        chats.add("/spawn");
        c.punishment(player, "Contract", "kick", "Spamming", null, null, null, false, "minecraft");
        c.punishment(player, "Contract", "ban", "Griefing", UUID.randomUUID(), "Moderator",
                Instant.now().plusSeconds(86_400), false, "minecraft");
        // A punishment plugin's mute, then its revoke naming the plugin's own id.
        UUID moderator = UUID.randomUUID();
        UUID admin = UUID.randomUUID();
        assertTrue(c.punishmentIssued(player, "Contract", "mute", "Spam", moderator, "Moderator",
                Instant.now().minusSeconds(5), Instant.now().plusSeconds(86_400), false, "lobby", "litebans", "77"));
        assertTrue(c.punishmentRevoked(player, "Contract", "mute", admin, "Admin", "Appeal accepted", "litebans", "77"));
        Instant now = Instant.now();
        // Anti-cheat flags as the Grim and Vulcan integrations send them: ping, and the TPS sampled (19.8).
        assertTrue(c.anticheatFlag(player, "Contract", "BadPackets", "A", 4.5, "3.4 blocks", "grim", false, 87));
        assertTrue(c.anticheatFlag(player, "Contract", "Speed", "B", 12, "delta=0.61", "vulcan", true, null));
        c.rankChange(player, "Contract", "add", "vip", null, null);
        UUID linkId = UuidV7.at(now);
        c.record(new Records.AccountLink(linkId, player, "discord", "123456789", "contract#0001", "link", now));
        Map<String, Object> props = new LinkedHashMap<>();
        props.put("crate", "vote");
        props.put("keys", 2);
        props.put("ratio", 0.25);
        props.put("nested", Map.of("list", List.of(1, "two", true)));
        assertTrue(c.track(player, "crate_opened", props));
        drained(core);
        assertFalse(core.status().sentRecords() < 14, core.status().toString());

        // A retry after a lost answer: the same batch twice is stored once.
        Batch twice = new Batcher().batch(List.of(
                new Records.Chat(UuidV7.at(Instant.now()), serverId, player, "Contract", "chat", "sent twice", "global",
                        Instant.now()))).get(0);
        chats.add("sent twice");
        HttpTransport direct = new HttpTransport(BASE, pluginKey, "contract-test");
        assertEquals(202, direct.send(RecordKind.CHAT, twice.gzipBody(), Duration.ofSeconds(10)).status());
        assertEquals(202, direct.send(RecordKind.CHAT, twice.gzipBody(), Duration.ofSeconds(10)).status());

        // ---- Phase 2: the outage. The stack dies; the plugin keeps capturing. ----
        killStack();
        for (int i = 0; i < 20; i++) {
            c.chat(player, "Contract", "during the outage " + i);
            chats.add("during the outage " + i);
            c.track(player, "crate_opened", Map.of("i", i));
        }
        waitFor("the plugin to notice the outage", Duration.ofSeconds(30),
                () -> core.status().spoolBatches() > 0 && core.status().lastError() != null
                        && core.status().lastError().startsWith("network error"));
        // The server restarts while the stack is still down: the spool keeps everything.
        core.shutdown(1);
        WardenCore restarted = new WardenCore(dataFolder, config(pluginKey), STATS, logger);
        assertEquals(serverId, restarted.serverId(), "the server id is kept across restarts");
        assertTrue(restarted.status().spoolBatches() > 0, "the outage's records are in the spool");
        restarted.start();
        Capture c2 = restarted.capture();
        c2.chat(player, "Contract", "after the plugin restart");
        chats.add("after the plugin restart");
        assertTrue(c2.track(player, "crate_opened", Map.of("after", true)));
        c2.quit(player, "Contract");
        Thread.sleep(1500); // at least one failed cycle while the stack is down

        // ---- Phase 3: the stack comes back; the plugin catches up by itself. ----
        startStack();
        drained(restarted);
        restarted.shutdown(3); // online: false

        // ---- Read everything back through the dashboard API. ----
        waitFor("every custom event to be readable", Duration.ofSeconds(90), () -> {
            try {
                JsonArray items = call("GET", "/api/v1/events?name=crate_opened&player_uuid=" + player + "&limit=500",
                        dashKey, null).getAsJsonObject().getAsJsonArray("items");
                return items.size() >= 22;
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        JsonArray events = call("GET", "/api/v1/events?name=crate_opened&player_uuid=" + player + "&limit=500",
                dashKey, null).getAsJsonObject().getAsJsonArray("items");
        assertEquals(22, events.size(), "every custom event once");
        Set<String> ids = new HashSet<>();
        JsonObject first = null;
        for (JsonElement e : events) {
            JsonObject o = e.getAsJsonObject();
            assertTrue(ids.add(o.get("id").getAsString()), "no custom event twice");
            if (o.getAsJsonObject("properties").has("crate")) {
                first = o;
            }
        }
        assertNotNull(first);
        assertEquals("{\"crate\":\"vote\",\"keys\":2,\"ratio\":0.25,\"nested\":{\"list\":[1,\"two\",true]}}",
                first.getAsJsonObject("properties").toString(), "properties as sent, order and numbers included");
        eventIds.addAll(ids);

        waitFor("the chat log", Duration.ofSeconds(60), () -> {
            try {
                return call("GET", "/api/players/" + player + "/chatlog?limit=500", dashKey, null)
                        .getAsJsonObject().getAsJsonArray("items").size() >= chats.size();
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        JsonArray chatlog = call("GET", "/api/players/" + player + "/chatlog?limit=500", dashKey, null)
                .getAsJsonObject().getAsJsonArray("items");
        List<String> messages = new ArrayList<>();
        Set<String> chatIds = new HashSet<>();
        for (JsonElement e : chatlog) {
            JsonObject o = e.getAsJsonObject();
            messages.add(o.get("message").getAsString());
            assertTrue(chatIds.add(o.get("id").getAsString()), "no chat line twice: " + o);
            assertEquals(serverId.toString(), o.get("server_id").getAsString());
            if (o.get("message").getAsString().startsWith("/")) {
                assertEquals("command", o.get("entry_type").getAsString());
            }
        }
        assertEquals(chats, new HashSet<>(messages));
        assertEquals(chats.size(), messages.size(), "each line exactly once: " + messages);
        assertFalse(messages.toString().contains("hunter2"));

        JsonObject lookup = call("GET", "/api/players/" + player, dashKey, null).getAsJsonObject();
        assertEquals("Contract", lookup.get("username").getAsString());
        JsonArray joins = lookup.getAsJsonArray("joins");
        assertEquals(1, joins.size(), lookup.toString());
        assertEquals(serverId.toString(), joins.get(0).getAsJsonObject().get("server_id").getAsString());
        assertFalse(joins.get(0).getAsJsonObject().get("left_at").isJsonNull(), "the quit closed the session");
        assertEquals("discord", lookup.getAsJsonObject("linked_account").get("platform").getAsString());
        assertEquals("vip", lookup.get("rank").getAsString());

        waitFor("the revoke to end the mute", Duration.ofSeconds(60), () -> {
            try {
                for (JsonElement e : call("GET", "/api/players/" + player + "/punishments", dashKey, null)
                        .getAsJsonObject().getAsJsonArray("items")) {
                    if (e.getAsJsonObject().get("type").getAsString().equals("mute")) {
                        return !e.getAsJsonObject().get("revoked_at").isJsonNull();
                    }
                }
                return false;
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        JsonArray punishments = call("GET", "/api/players/" + player + "/punishments", dashKey, null)
                .getAsJsonObject().getAsJsonArray("items");
        assertEquals(3, punishments.size(), punishments.toString());
        Set<String> types = new HashSet<>();
        for (JsonElement e : punishments) {
            JsonObject o = e.getAsJsonObject();
            types.add(o.get("type").getAsString());
            if (o.get("type").getAsString().equals("ban")) {
                assertTrue(o.get("is_active").getAsBoolean());
                assertEquals("Griefing", o.get("reason").getAsString());
                assertFalse(o.get("expires_at").isJsonNull());
            }
            if (o.get("type").getAsString().equals("mute")) {
                assertFalse(o.get("is_active").getAsBoolean(), "the revoke ended it: " + o);
                assertEquals("Spam", o.get("reason").getAsString());
                assertEquals(moderator.toString(), o.get("staff_uuid").getAsString());
                assertEquals(admin.toString(), o.get("revoked_by").getAsString());
                assertEquals("Appeal accepted", o.get("revoke_reason").getAsString());
                assertEquals("litebans", o.get("source_plugin").getAsString());
                assertEquals("lobby", o.get("scope").getAsString());
                assertFalse(o.get("ip_based").getAsBoolean());
                assertFalse(o.get("expires_at").isJsonNull());
            }
        }
        assertEquals(Set.of("kick", "ban", "mute"), types);

        JsonArray flags = call("GET", "/api/players/" + player + "/flags", dashKey, null)
                .getAsJsonObject().getAsJsonArray("items");
        assertEquals(2, flags.size(), flags.toString());
        Map<String, JsonObject> bySource = new HashMap<>();
        flags.forEach(f -> bySource.put(f.getAsJsonObject().get("source_plugin").getAsString(), f.getAsJsonObject()));
        JsonObject grim = bySource.get("grim");
        JsonObject vulcan = bySource.get("vulcan");
        assertNotNull(grim, flags.toString());
        assertNotNull(vulcan, flags.toString());
        assertEquals("BadPackets", grim.get("check_name").getAsString());
        assertEquals("A", grim.get("check_type").getAsString());
        assertEquals(4.5, grim.get("violation_level").getAsDouble());
        assertEquals("3.4 blocks", grim.get("detail").getAsString());
        assertEquals("grim", grim.get("source_plugin").getAsString());
        assertFalse(grim.get("is_experimental").getAsBoolean());
        assertEquals(87.0, grim.get("ping_ms").getAsDouble());
        assertEquals(19.8, grim.get("tps").getAsDouble());
        assertEquals(serverId.toString(), grim.get("server_id").getAsString());
        assertFalse(grim.get("flagged_at").isJsonNull());
        assertEquals("Speed", vulcan.get("check_name").getAsString());
        assertEquals("B", vulcan.get("check_type").getAsString());
        assertEquals("vulcan", vulcan.get("source_plugin").getAsString());
        assertTrue(vulcan.get("is_experimental").getAsBoolean());
        assertTrue(!vulcan.has("ping_ms") || vulcan.get("ping_ms").isJsonNull(), "no ping given: none stored");
        assertEquals(19.8, vulcan.get("tps").getAsDouble());

        JsonArray rank = call("GET", "/api/v1/events?internal=true&name=rank_change&player_uuid=" + player,
                dashKey, null).getAsJsonObject().getAsJsonArray("items");
        assertEquals(1, rank.size());
        assertEquals("vip", rank.get(0).getAsJsonObject().getAsJsonObject("properties").get("group").getAsString());

        JsonObject server = null;
        for (JsonElement e : call("GET", "/api/servers", dashKey, null).getAsJsonObject().getAsJsonArray("items")) {
            if (e.getAsJsonObject().get("id").getAsString().equals(serverId.toString())) {
                server = e.getAsJsonObject();
            }
        }
        assertNotNull(server, "the server is listed");
        assertEquals("contract-test", server.get("name").getAsString());
        assertEquals("Paper 1.21.4", server.get("version").getAsString());
        assertEquals(100, server.get("max_players").getAsInt());
        assertFalse(server.get("is_online").getAsBoolean(), "the clean shutdown's heartbeat said offline");
        assertEquals(22, eventIds.size());
    }

    /**
     * A player's network session as the Velocity plugin sends it: joins lobby, switches to
     * survival, quits. The dashboard shows one stretch per backend, the first closed by the switch
     * and the second by the quit, both with the address the proxy saw.
     */
    @Test
    void aProxysNetworkSessionReadsBackAsAStretchPerBackend() throws Exception {
        startStack();
        String account = call("POST", "/api/admin/accounts", ADMIN, "{\"name\":\"proxy contract\"}")
                .getAsJsonObject().get("id").getAsString();
        String pluginKey = call("POST", "/api/admin/accounts/" + account + "/keys", ADMIN,
                "{\"kind\":\"plugin\",\"label\":\"proxy\"}").getAsJsonObject().get("key").getAsString();
        String dashKey = call("POST", "/api/admin/accounts/" + account + "/keys", ADMIN,
                "{\"kind\":\"dashboard\"}").getAsJsonObject().get("key").getAsString();

        UUID player = UuidV7.at(Instant.now());
        UUID lobby = UuidV7.at(Instant.now());
        UUID survival = UuidV7.at(Instant.now().plusMillis(1));
        // The heartbeat's role is left out here: the proxy's ServerStats without role() is a
        // plain server to every service version.
        WardenCore proxy = new WardenCore(dataFolder, config(pluginKey), STATS, logger);
        proxy.start();
        NetworkSessions network = new NetworkSessions(proxy.serverId(), BackendIds.load(dataFolder, logger),
                proxy.capture(), Duration.ofSeconds(10), logger);
        network.connected(player, "Traveller", "203.0.113.10", "protocol 767", "lobby");
        network.announced("lobby", lobby); // the lobby's announcement arrives after the connection
        network.announced("survival", survival);
        network.connected(player, "Traveller", "203.0.113.10", "protocol 767", "survival");
        proxy.capture().command(network.serverOf(player), player, "Traveller", "/server lobby");
        network.disconnected(player, "Traveller");
        drained(proxy);
        proxy.shutdown(3);

        waitFor("both stretches to be closed", Duration.ofSeconds(60), () -> {
            try {
                JsonArray joins = call("GET", "/api/players/" + player, dashKey, null).getAsJsonObject()
                        .getAsJsonArray("joins");
                return joins.size() == 2 && !joins.get(0).getAsJsonObject().get("left_at").isJsonNull();
            } catch (AssertionError e) {
                if (e.getMessage().contains(" answered 404")) {
                    return false; // not projected yet
                }
                throw e;
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        JsonArray joins = call("GET", "/api/players/" + player, dashKey, null).getAsJsonObject().getAsJsonArray("joins");
        assertEquals(survival.toString(), joins.get(0).getAsJsonObject().get("server_id").getAsString(), "newest first");
        assertEquals(lobby.toString(), joins.get(1).getAsJsonObject().get("server_id").getAsString());
        assertEquals(joins.get(0).getAsJsonObject().get("joined_at").getAsString(),
                joins.get(1).getAsJsonObject().get("left_at").getAsString(), "the lobby stretch ends at the switch");

        JsonArray sessions = call("GET", "/api/admin/accounts/" + account + "/players/" + player + "/export", ADMIN, null)
                .getAsJsonObject().getAsJsonArray("sessions");
        assertEquals(2, sessions.size(), sessions.toString());
        JsonObject first = sessions.get(0).getAsJsonObject();
        JsonObject second = sessions.get(1).getAsJsonObject();
        assertEquals(lobby.toString(), first.get("server_id").getAsString());
        assertEquals("switched", first.get("closed_by").getAsString());
        assertEquals(survival.toString(), second.get("server_id").getAsString());
        assertEquals("quit", second.get("closed_by").getAsString());
        assertEquals("protocol 767", second.get("client_version").getAsString());
        assertFalse(first.get("ip_hash").isJsonNull(), "the proxy sends the player's address");
        assertEquals(first.get("ip_hash"), second.get("ip_hash"), "the same address on both stretches");

        waitFor("the proxy's command", Duration.ofSeconds(60), () -> {
            try {
                return call("GET", "/api/players/" + player + "/chatlog", dashKey, null).getAsJsonObject()
                        .getAsJsonArray("items").size() == 1;
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        JsonObject command = call("GET", "/api/players/" + player + "/chatlog", dashKey, null).getAsJsonObject()
                .getAsJsonArray("items").get(0).getAsJsonObject();
        assertEquals("/server lobby", command.get("message").getAsString());
        assertEquals("command", command.get("entry_type").getAsString());
        assertEquals(survival.toString(), command.get("server_id").getAsString(), "the backend the player was on");
    }
}
