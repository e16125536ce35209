package dev.warden.plugin.paper.vulcan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.logging.Logger;
import me.frep.vulcan.api.check.Check;
import me.frep.vulcan.api.event.VulcanFlagEvent;
import org.bukkit.Server;
import org.bukkit.entity.Player;
import org.bukkit.event.Cancellable;
import org.bukkit.event.Event;
import org.bukkit.event.EventHandler;
import org.bukkit.event.EventPriority;
import org.bukkit.event.Listener;
import org.bukkit.plugin.Plugin;
import org.bukkit.plugin.PluginManager;
import org.junit.jupiter.api.Test;

/** VulcanFlagEvent, fired at the listener Warden registers with the server, and the flag record. */
class VulcanIntegrationTest {
    static final UUID SERVER = UUID.fromString("0190a5f2-0000-7000-8000-000000000001");
    static final UUID CHEATER = UUID.fromString("069a79f4-44e9-4726-a5be-fca90e38aaf5");
    static final Instant NOW = Instant.parse("2026-11-29T06:45:00Z");

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

    final EventQueue queue = new EventQueue(1000);
    final Capture capture = new Capture(queue, SERVER, WardenConfig.defaults("http://x", "wdn_plugin_x"),
            Clock.fixed(NOW, ZoneOffset.UTC), answering(ServerStats.class, Map.of("tps", 19.93)));
    final Integrations integrations = new Integrations(Logger.getLogger("test"));
    final FlagCap cap = new FlagCap(20);
    final List<Listener> registered = new ArrayList<>();
    final Plugin plugin = plugin(registered);
    final Integration integration = integrations.enable("Vulcan", "2.9.7",
            i -> VulcanIntegration.enable(plugin, capture, cap, i));

    /** A plugin whose server's plugin manager keeps the listeners registered with it. */
    static Plugin plugin(List<Listener> registered) {
        PluginManager manager = (PluginManager) Proxy.newProxyInstance(PluginManager.class.getClassLoader(),
                new Class<?>[] {PluginManager.class}, (proxy, m, args) -> {
                    assertEquals("registerEvents", m.getName());
                    registered.add((Listener) args[0]);
                    return null;
                });
        Server server = answering(Server.class, Map.of("getPluginManager", manager));
        return answering(Plugin.class, Map.of("getServer", server));
    }

    static Player player(UUID id, String name, int ping) {
        return answering(Player.class, Map.of("getUniqueId", id, "getName", name, "getPing", ping));
    }

    static Check check(String name, char type, int vl, boolean experimental) {
        return answering(Check.class, Map.of("getName", name, "getType", type, "getVl", vl, "isExperimental", experimental));
    }

    /** Fires {@code event} as Bukkit does: each MONITOR handler for it, skipping cancelled events where asked. */
    void fire(Event event) throws Exception {
        int handled = 0;
        for (Listener listener : registered) {
            for (Method m : listener.getClass().getMethods()) {
                EventHandler h = m.getAnnotation(EventHandler.class);
                if (h == null || !m.getParameterTypes()[0].isInstance(event)) {
                    continue;
                }
                assertEquals(EventPriority.MONITOR, h.priority());
                handled++;
                if (h.ignoreCancelled() && event instanceof Cancellable c && c.isCancelled()) {
                    continue;
                }
                try {
                    m.invoke(listener, event);
                } catch (InvocationTargetException e) {
                    throw new AssertionError("the handler threw", e.getCause());
                }
            }
        }
        assertEquals(1, handled, "one handler for " + event.getClass().getSimpleName());
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
        assertEquals(1, registered.size());
        VulcanFlagEvent event = new VulcanFlagEvent(player(CHEATER, "Cheater", 143), check("speed", 'c', 7, false),
                "deltaXZ=0.61 max=0.36");
        assertTrue(event.isAsynchronous(), "Vulcan fires its flags off the server thread");
        fire(event);
        List<Records.AnticheatFlag> flags = flags();
        assertEquals(1, flags.size());
        Records.AnticheatFlag f = flags.get(0);
        JsonObject o = f.toJson();
        assertEquals(f.id().toString(), o.get("id").getAsString());
        assertEquals(NOW.toEpochMilli(), f.id().getMostSignificantBits() >>> 16);
        assertEquals(SERVER.toString(), o.get("server_id").getAsString());
        assertEquals(CHEATER.toString(), o.get("player_uuid").getAsString());
        assertEquals("Cheater", o.get("player_name").getAsString());
        assertEquals("Speed", o.get("check_name").getAsString());
        assertEquals("C", o.get("check_type").getAsString());
        assertEquals(7.0, o.get("violation_level").getAsDouble());
        assertEquals("deltaXZ=0.61 max=0.36", o.get("detail").getAsString());
        assertEquals("vulcan", o.get("source_plugin").getAsString());
        assertFalse(o.get("is_experimental").getAsBoolean());
        assertEquals(143, o.get("ping_ms").getAsInt());
        assertEquals(19.93, o.get("tps").getAsDouble());
        assertEquals("2026-11-29T06:45:00Z", o.get("flagged_at").getAsString());
        assertEquals(13, o.size(), o.toString());
        assertEquals(1, integration.snapshot().sent());
    }

    @Test
    void experimentalFlagsAreMarkedAndCancelledOnesAreNotSent() throws Exception {
        fire(new VulcanFlagEvent(player(CHEATER, "Cheater", 20), check("killaura", 'a', 1, true), "angle=2.1"));
        VulcanFlagEvent cancelled = new VulcanFlagEvent(player(CHEATER, "Cheater", 20), check("fly", 'b', 1, false), "x");
        cancelled.setCancelled(true);
        fire(cancelled);
        List<Records.AnticheatFlag> flags = flags();
        assertEquals(1, flags.size(), "a flag another plugin cancelled is one Vulcan does not count");
        assertTrue(flags.get(0).experimental());
        assertEquals("Killaura", flags.get(0).checkName());
        assertEquals("A", flags.get(0).checkType());
    }

    @Test
    void theCapIsPerCheckTypeAndCounted() throws Exception {
        Player cheater = player(CHEATER, "Cheater", 20);
        for (int i = 0; i < 30; i++) {
            fire(new VulcanFlagEvent(cheater, check("speed", 'a', i, false), "a" + i));
            fire(new VulcanFlagEvent(cheater, check("speed", 'b', i, false), "b" + i));
        }
        assertEquals(40, flags().size(), "Speed A and Speed B have a limit each");
        assertEquals(40, integration.snapshot().sent());
        assertEquals(20, integration.snapshot().dropped());
    }

    @Test
    void aFlagWhoseCheckLacksAMethodDisablesVulcanAlone() throws Exception {
        Integration other = integrations.enable("Grim", "2.3.73", i -> {});
        fire(new VulcanFlagEvent(player(CHEATER, "Cheater", 20),
                answering(Check.class, Map.of("getName", new NoSuchMethodError("me.frep.vulcan.api.check.Check.getName()"))),
                "x"));
        fire(new VulcanFlagEvent(player(CHEATER, "Cheater", 20), check("speed", 'a', 1, false), "after"));
        assertTrue(flags().isEmpty());
        assertEquals(Integration.State.FAILED, integration.snapshot().state());
        assertTrue(other.active());
    }
}
