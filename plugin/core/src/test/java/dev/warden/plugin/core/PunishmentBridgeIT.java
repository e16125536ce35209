package dev.warden.plugin.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.warden.plugin.core.enforce.EnforcementConfig;
import dev.warden.plugin.core.enforce.PunishmentBridge;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * Dashboard actions applied through a punishment plugin, against a real stack: a web ban reaches
 * two cores that both have "LiteBans" (a recording bridge that, like LiteBans, fires its own event
 * for what it is told, with its own id, into the core's integration path); only the writer applies
 * it (once, also across its restart), the other acknowledges skipped; the dashboard shows one ban,
 * not two; an in-game unban of the mirrored id ends the web ban; and a dashboard revoke of a
 * punishment LiteBans sent reaches the writer's bridge as the lift of that id.
 *
 * <p>Run by {@code deploy/plugin_contract.sh}; skipped without its WARDEN_IT_* variables.
 */
@EnabledIfEnvironmentVariable(named = "WARDEN_IT_STACK_CMD", matches = ".+")
class PunishmentBridgeIT extends CoresOnAStack {


    PunishmentBridgeIT() {
        super("punishment-bridge-it");
    }

    /** One LiteBans database (the network's), shared by the servers' bridges: one id sequence. */
    static final AtomicLong IDS = new AtomicLong(100);

    /** Behaves like LiteBans on one server: records each call and fires its event into the core. */
    static final class Recording implements PunishmentBridge {
        final List<String> calls = new CopyOnWriteArrayList<>();
        volatile WardenCore core;

        @Override
        public String source() {
            return "litebans";
        }

        @Override
        public String displayName() {
            return "LiteBans";
        }

        @Override
        public String issue(String type, UUID player, String playerName, String reason, Instant expiresAt) {
            String id = Long.toString(IDS.incrementAndGet());
            calls.add("issue " + type + " " + reason + " -> " + id);
            // LiteBans' entryAdded, on its own thread, as the integration hands it to the core.
            Thread t = new Thread(() -> core.capture().punishmentIssued(player, playerName, type, reason, null, "Console",
                    null, expiresAt, false, "global", source(), id));
            t.start();
            return null;
        }

        @Override
        public void lift(String type, UUID player, String playerName, String externalId, String reason) {
            calls.add("lift " + type + " " + externalId);
            core.capture().punishmentRevoked(player, playerName, type, null, "Console", reason, source(), externalId);
        }
    }

    WardenCore core(String folder, String pluginKey, boolean writer, Recording bridge) throws IOException {
        WardenCore core = new WardenCore(root.resolve(folder), config(folder, pluginKey), ContractIT.STATS, logger);
        bridge.core = core;
        core.useBridge(bridge);
        core.start();
        core.startEnforcement(new EnforcementConfig(true, null, 2, true, writer), new EnforcementIT.Recorder());
        cores.add(core);
        return core;
    }

    static List<JsonObject> punishments(String dashKey, UUID player) {
        try {
            HttpResponse<String> r = ContractIT.HTTP.send(HttpRequest.newBuilder(URI.create(BASE + "/api/players/" + player
                    + "/punishments")).header("Authorization", "Bearer " + dashKey).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.ofString());
            List<JsonObject> out = new ArrayList<>();
            if (r.statusCode() == 200) {
                for (JsonElement e : com.google.gson.JsonParser.parseString(r.body()).getAsJsonObject().getAsJsonArray("items")) {
                    out.add(e.getAsJsonObject());
                }
            }
            return out;
        } catch (IOException | InterruptedException e) {
            return List.of();
        }
    }

    static JsonObject find(List<JsonObject> items, String field, String value) {
        return items.stream().filter(o -> o.has(field) && !o.get(field).isJsonNull() && o.get(field).getAsString().equals(value))
                .findFirst().orElse(null);
    }

    static boolean settled(WardenCore c) {
        return c.feedStatus().pendingAcks() == 0 && c.feedStatus().lastAction() != null;
    }

    @Test
    void aWebBanIsWrittenIntoThePluginOnceByTheWriterAndItsEchoAndRevokesAreTracked() throws Exception {
        startStack();
        UUID account = UUID.fromString(ContractIT.call("POST", "/api/admin/accounts", ADMIN, "{\"name\":\"bridge\"}")
                .getAsJsonObject().get("id").getAsString());
        String pluginKey = ContractIT.call("POST", "/api/admin/accounts/" + account + "/keys", ADMIN,
                "{\"kind\":\"plugin\",\"label\":\"bridge\"}").getAsJsonObject().get("key").getAsString();
        String dashKey = ContractIT.call("POST", "/api/admin/accounts/" + account + "/keys", ADMIN,
                "{\"kind\":\"dashboard\"}").getAsJsonObject().get("key").getAsString();
        Recording writerPlugin = new Recording();
        Recording otherPlugin = new Recording();
        WardenCore writer = core("bridge-writer", pluginKey, true, writerPlugin);
        WardenCore other = core("bridge-other", pluginKey, false, otherPlugin);
        UUID player = UuidV7.at(Instant.now());
        writer.capture().join(player, "Mirrored", "203.0.113.30", "protocol 769");

        // A web ban: the writer applies it through the plugin; the other server skips it.
        UUID ban = EnforcementIT.writeAction(account, EnforcementIT.issue("ban", player, "x-ray", Instant.now().plusSeconds(86_400),
                "global"));
        ContractIT.waitFor("both servers to acknowledge the ban", Duration.ofSeconds(60),
                () -> settled(writer) && settled(other) && writer.bridgeLinks().linkOf(ban) != null
                        && writer.bridgeLinks().linkOf(ban).externalId() != null);
        assertEquals(1, writerPlugin.calls.size(), writerPlugin.calls.toString());
        // The ban's appeal link goes into the reason the plugin shows on its ban screen.
        assertTrue(writerPlugin.calls.get(0).matches("issue ban x-ray - Appeal at " + java.util.regex.Pattern.quote(BASE)
                + "/appeal/\\S+ -> \\d+"), writerPlugin.calls.toString());
        String liteBansId = writerPlugin.calls.get(0).substring(writerPlugin.calls.get(0).indexOf("-> ") + 3);
        assertEquals(liteBansId, writer.bridgeLinks().linkOf(ban).externalId());
        assertEquals(List.of(), otherPlugin.calls, "only the writer writes into the shared database");
        assertTrue(other.feedStatus().lastAction().endsWith("(skipped)"), other.feedStatus().lastAction());
        assertNull(writer.sanctions().ban(player, Instant.now()), "the plugin enforces it, not Warden's own list");

        // The writer restarts: the ban is not written again, the link is still there.
        writer.shutdown(0);
        cores.remove(writer);
        WardenCore restarted = core("bridge-writer", pluginKey, true, writerPlugin);
        assertEquals(liteBansId, restarted.bridgeLinks().linkOf(ban).externalId(), "the link outlives the restart");
        EnforcementIT.writeAction(account, EnforcementIT.issue("kick", player, "afk", null, "global"));
        ContractIT.waitFor("the restarted writer to apply the next action", Duration.ofSeconds(60),
                () -> restarted.feedStatus().lastAction() != null && restarted.feedStatus().lastAction().startsWith("kick")
                        && restarted.feedStatus().pendingAcks() == 0);
        assertEquals(1, writerPlugin.calls.size(), "applied once across the restart: " + writerPlugin.calls);

        // The dashboard shows one ban (the echo was not sent as a second one): a record sent after
        // the echo is projected, so the echo would have been too.
        restarted.capture().punishmentIssued(player, "Mirrored", "kick", "sentinel", null, "Console", null, null, false,
                "global", "litebans", "sentinel-1");
        ContractIT.waitFor("the sentinel in the dashboard", Duration.ofSeconds(60),
                () -> find(punishments(dashKey, player), "reason", "sentinel") != null);
        List<JsonObject> items = punishments(dashKey, player);
        assertEquals(1, items.stream().filter(o -> o.get("type").getAsString().equals("ban")).count(), items.toString());
        JsonObject web = find(items, "id", ban.toString());
        assertTrue(web.get("is_active").getAsBoolean(), web.toString());

        // /unban in LiteBans of the mirrored id ends the web ban.
        writerPlugin.core.capture().punishmentRevoked(player, "Mirrored", "ban", null, "Bob", "in-game unban", "litebans",
                liteBansId);
        ContractIT.waitFor("the web ban to end", Duration.ofSeconds(60), () -> {
            JsonObject p = find(punishments(dashKey, player), "id", ban.toString());
            return p != null && !p.get("is_active").getAsBoolean() && !p.get("revoked_at").isJsonNull();
        });

        // A dashboard revoke of a mute LiteBans sent: lifted in LiteBans by the writer, by its id.
        restarted.capture().punishmentIssued(player, "Mirrored", "mute", "spam", null, "Console", null, null, false,
                "global", "litebans", "555");
        ContractIT.waitFor("LiteBans' mute in the dashboard", Duration.ofSeconds(60),
                () -> find(punishments(dashKey, player), "reason", "spam") != null);
        UUID mute = UUID.fromString(find(punishments(dashKey, player), "reason", "spam").get("id").getAsString());
        JsonObject revoke = EnforcementIT.revoke(mute, player, "mute");
        revoke.getAsJsonObject("revoke").addProperty("source_plugin", "litebans");
        revoke.getAsJsonObject("revoke").addProperty("external_id", "555");
        EnforcementIT.writeAction(account, revoke);
        ContractIT.waitFor("the writer to lift the mute in LiteBans", Duration.ofSeconds(60),
                () -> writerPlugin.calls.contains("lift mute 555"));
        ContractIT.waitFor("the other server to skip it", Duration.ofSeconds(60),
                () -> other.feedStatus().lastAction().equals("revoke of a mute (skipped)") && other.feedStatus().pendingAcks() == 0);
        assertEquals(List.of(), otherPlugin.calls);
        ContractIT.waitFor("the mute to end in the dashboard", Duration.ofSeconds(60), () -> {
            JsonObject p = find(punishments(dashKey, player), "id", mute.toString());
            return p != null && !p.get("is_active").getAsBoolean();
        });
        ContractIT.waitFor("every ack accepted", Duration.ofSeconds(30),
                () -> restarted.feedStatus().pendingAcks() == 0 && other.feedStatus().pendingAcks() == 0);
    }
}
