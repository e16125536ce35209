package dev.warden.plugin.paper.grim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ac.grim.grimac.api.AbstractCheck;
import ac.grim.grimac.api.GrimUser;
import ac.grim.grimac.api.event.EventBus;
import ac.grim.grimac.api.event.GrimEventListener;
import ac.grim.grimac.api.event.events.FlagEvent;
import com.google.gson.JsonObject;
import dev.warden.plugin.core.Capture;
import dev.warden.plugin.core.EventQueue;
import dev.warden.plugin.core.Records;
import dev.warden.plugin.core.ServerStats;
import dev.warden.plugin.core.WardenConfig;
import dev.warden.plugin.core.WardenRecord;
import dev.warden.plugin.core.integration.FlagCap;
import dev.warden.plugin.core.integration.Integration;
import dev.warden.plugin.core.integration.Integrations;
import java.lang.reflect.Proxy;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/** Grim's FlagEvent, fired through the listener Warden gives Grim's event bus, and the flag record. */
class GrimIntegrationTest {
    static final UUID SERVER = UUID.fromString("0190a5f2-0000-7000-8000-000000000001");
    static final UUID CHEATER = UUID.fromString("069a79f4-44e9-4726-a5be-fca90e38aaf5");
    static final UUID OTHER = UUID.fromString("853c80ef-3c37-49fd-aa49-938b674adae6");
    static final Instant NOW = Instant.parse("2026-11-29T06:40:00Z");

    /** An instance of {@code type} answering the given methods (GrimAPI's users and checks are interfaces). */
    @SuppressWarnings("unchecked")
    static <T> T answering(Class<T> type, Map<String, Object> answers) {
        return (T) Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (proxy, m, args) -> {
            Object answer = answers.get(m.getName());
            if (answer instanceof Throwable t) {
                throw t;
            }
            if (answer != null) {
                return answer;
            }
            throw new UnsupportedOperationException(m.getName());
        });
    }

    static ServerStats tps(double tps) {
        return answering(ServerStats.class, Map.of("tps", tps));
    }

    final EventQueue queue = new EventQueue(1000);
    final Capture capture = new Capture(queue, SERVER, WardenConfig.defaults("http://x", "wdn_plugin_x"),
            Clock.fixed(NOW, ZoneOffset.UTC), tps(18.7));
    final Integrations integrations = new Integrations(Logger.getLogger("test"));
    final FlagCap cap = new FlagCap(20);
    final List<GrimEventListener<FlagEvent>> subscribed = new ArrayList<>();
    final Object plugin = new Object();
    final Integration integration = integrations.enable("Grim", "2.3.73", i -> GrimIntegration.register(bus(), plugin,
            capture, cap, i));

    /** Grim's event bus as far as Warden uses it: keeps the FlagEvent listener subscribed for this plugin. */
    @SuppressWarnings("unchecked")
    EventBus bus() {
        return (EventBus) Proxy.newProxyInstance(EventBus.class.getClassLoader(), new Class<?>[] {EventBus.class},
                (proxy, m, args) -> {
                    assertEquals("subscribe", m.getName());
                    assertSame(plugin, args[0]);
                    assertSame(FlagEvent.class, args[1]);
                    subscribed.add((GrimEventListener<FlagEvent>) args[2]);
                    return null;
                });
    }

    static GrimUser user(UUID id, String name, int ping) {
        return answering(GrimUser.class, Map.of("getUniqueId", id, "getName", name, "getTransactionPing", ping));
    }

    static AbstractCheck check(String name, double violations, boolean experimental) {
        return answering(AbstractCheck.class, Map.of("getCheckName", name, "getViolations", violations,
                "isExperimental", experimental));
    }

    /** Fires a flag the way Grim's bus does: every subscribed listener gets the event. */
    void fire(GrimUser user, AbstractCheck check, String verbose) throws Exception {
        FlagEvent event = new FlagEvent(user, check, verbose);
        for (GrimEventListener<FlagEvent> l : subscribed) {
            l.handle(event);
        }
    }

    List<Records.AnticheatFlag> flags() {
        List<Records.AnticheatFlag> out = new ArrayList<>();
        for (WardenRecord r : queue.drain(1000)) {
            out.add((Records.AnticheatFlag) r);
        }
        return out;
    }

    @Test
    void aFlagBecomesTheContractsAnticheatFlagRecord() throws Exception {
        assertEquals(1, subscribed.size(), "one listener, subscribed at start");
        fire(user(CHEATER, "Cheater", 87), check("BadPacketsA", 3.0, false), "yaw=361.0");
        List<Records.AnticheatFlag> flags = flags();
        assertEquals(1, flags.size());
        Records.AnticheatFlag f = flags.get(0);
        JsonObject o = f.toJson();
        assertEquals(f.id().toString(), o.get("id").getAsString());
        assertEquals(NOW.toEpochMilli(), f.id().getMostSignificantBits() >>> 16, "a UUID v7 of the flag's time");
        assertEquals(SERVER.toString(), o.get("server_id").getAsString());
        assertEquals(CHEATER.toString(), o.get("player_uuid").getAsString());
        assertEquals("Cheater", o.get("player_name").getAsString());
        assertEquals("BadPackets", o.get("check_name").getAsString());
        assertEquals("A", o.get("check_type").getAsString());
        assertEquals(3.0, o.get("violation_level").getAsDouble());
        assertEquals("yaw=361.0", o.get("detail").getAsString());
        assertEquals("grim", o.get("source_plugin").getAsString());
        assertFalse(o.get("is_experimental").getAsBoolean());
        assertEquals(87, o.get("ping_ms").getAsInt());
        assertEquals(18.7, o.get("tps").getAsDouble());
        assertEquals("2026-11-29T06:40:00Z", o.get("flagged_at").getAsString());
        assertEquals(13, o.size(), o.toString());
        assertEquals(1, integration.snapshot().sent());
    }

    @Test
    void anExperimentalCheckAndChecksWithoutAType() throws Exception {
        fire(user(CHEATER, "Cheater", 120), check("Simulation", 41.25, true), "");
        fire(user(CHEATER, "Cheater", 120), check("AimModulo360", 2, false), "offset=0.0001");
        List<Records.AnticheatFlag> flags = flags();
        JsonObject simulation = flags.get(0).toJson();
        assertEquals("Simulation", simulation.get("check_name").getAsString());
        assertFalse(simulation.has("check_type"));
        assertTrue(simulation.get("is_experimental").getAsBoolean());
        assertEquals(41.25, simulation.get("violation_level").getAsDouble());
        assertEquals("AimModulo360", flags.get(1).toJson().get("check_name").getAsString());
        assertFalse(flags.get(1).toJson().has("check_type"));
        assertEquals(-1, GrimIntegration.typeAt("Reach"));
        assertEquals(-1, GrimIntegration.typeAt("AB"));
        assertEquals(-1, GrimIntegration.typeAt(null));
        assertEquals(5, GrimIntegration.typeAt("CrashB"));
    }

    @Test
    void aFlagStormIsCappedPerPlayerAndCheckAndCounted() throws Exception {
        GrimUser cheater = user(CHEATER, "Cheater", 50);
        AbstractCheck timer = check("Timer", 1, false);
        for (int i = 0; i < 500; i++) {
            fire(cheater, timer, "storm " + i);
        }
        fire(cheater, check("Reach", 1, false), "3.2 blocks");
        fire(user(OTHER, "Other", 30), timer, "x");
        List<Records.AnticheatFlag> flags = flags();
        assertEquals(22, flags.size());
        assertEquals(20, flags.stream().filter(f -> f.playerUuid().equals(CHEATER) && f.checkName().equals("Timer")).count());
        assertEquals("storm 19", flags.get(19).detail(), "the first 20 of the cycle are the ones sent");
        assertEquals("Reach", flags.get(20).checkName());
        assertEquals(OTHER, flags.get(21).playerUuid());
        Integration.Snapshot s = integration.snapshot();
        assertEquals(22, s.sent());
        assertEquals(480, s.dropped());
        assertEquals("    Grim 2.3.73: on, 22 sent, 480 dropped "
                + "(rate cap: over 20 flags per player and check in one sync cycle)",
                Integrations.statusLines(integrations.snapshot()).get(1));
        cap.newCycle();
        fire(cheater, timer, "next cycle");
        assertEquals(1, flags().size(), "a new cycle, a new window");
    }

    /** A Grim whose check lacks a method Warden calls: Grim's integration stops, alone. */
    @Test
    void aHandlerHittingAMissingMethodDisablesGrimAlone() throws Exception {
        Integration other = integrations.enable("Vulcan", "2.9.7", i -> {});
        AbstractCheck changed = answering(AbstractCheck.class,
                Map.of("getCheckName", new AbstractMethodError("ac.grim.grimac.api.AbstractCheck.getCheckName()")));
        fire(user(CHEATER, "Cheater", 50), changed, "x");
        fire(user(CHEATER, "Cheater", 50), check("Reach", 1, false), "ignored: the integration is off");
        assertTrue(flags().isEmpty());
        Integration.Snapshot s = integration.snapshot();
        assertEquals(Integration.State.FAILED, s.state());
        assertTrue(s.problem().startsWith("a flag: java.lang.AbstractMethodError"), s.problem());
        assertTrue(other.active(), "the other integrations go on");
        assertNull(other.snapshot().problem());
    }
}
