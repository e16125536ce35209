package dev.warden.plugin.paper;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.warden.plugin.core.Records;
import dev.warden.plugin.core.WardenRecord;
import dev.warden.plugin.paper.listener.PlayerListener;
import dev.warden.plugin.paper.listener.ProxyAnnouncer;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bukkit.entity.Player;
import org.bukkit.event.player.PlayerCommandPreprocessEvent;
import org.bukkit.event.player.PlayerJoinEvent;
import org.bukkit.event.player.PlayerQuitEvent;
import org.bukkit.event.player.PlayerRegisterChannelEvent;
import org.bukkit.plugin.Plugin;
import org.junit.jupiter.api.Test;

/** A backend behind a proxy: no joins or quits of its own, its server id announced to the proxy. */
class ProxyModeTest {
    static final UUID ID = UUID.fromString("069a79f4-44e9-4726-a5be-fca90e38aaf5");

    record Sent(Plugin plugin, String channel, byte[] message) {}

    final List<Sent> sent = new ArrayList<>();
    Set<String> channels = Set.of();
    final Plugin plugin = (Plugin) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Plugin.class},
            (self, m, args) -> m.getName().equals("toString") ? "Warden" : null);
    final Player base = ServerHarness.player(ID, "Notch", "10.0.0.1", 767);
    /** A player that records the plugin messages sent through its connection. */
    final Player notch = (Player) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Player.class},
            (self, m, args) -> {
                if (m.getName().equals("getListeningPluginChannels")) {
                    return channels;
                }
                if (m.getName().equals("sendPluginMessage")) {
                    sent.add(new Sent((Plugin) args[0], (String) args[1], (byte[]) args[2]));
                    return null;
                }
                return m.invoke(base, args);
            });

    @Test
    void behindAProxyJoinsAndQuitsAreNotSentButCommandsAre() {
        ServerHarness h = new ServerHarness();
        AtomicBoolean proxy = new AtomicBoolean(true);
        PlayerListener listener = new PlayerListener(h.capture, true, () -> false, proxy::get);
        h.fire(listener, new PlayerJoinEvent(notch, "joined"));
        h.fire(listener, new PlayerQuitEvent(notch, "left"));
        assertTrue(h.records().isEmpty(), "the proxy sends them");
        h.fire(listener, new PlayerCommandPreprocessEvent(notch, "/spawn"));
        List<WardenRecord> r = h.records();
        assertEquals(1, r.size());
        assertEquals("/spawn", ((Records.Chat) r.get(0)).message());
        proxy.set(false);
        h.fire(listener, new PlayerJoinEvent(notch, "joined"));
        assertEquals("join", ((Records.Session) h.records().get(0)).event(), "proxy: false sends them again");
    }

    @Test
    void theServerIdIsAnnouncedWhenTheProxyRegistersTheChannel() {
        ServerHarness h = new ServerHarness();
        AtomicBoolean proxy = new AtomicBoolean(true);
        ProxyAnnouncer announcer = new ProxyAnnouncer(plugin, ServerHarness.SERVER, proxy::get);
        h.fire(announcer, new PlayerRegisterChannelEvent(notch, "bungeecord:main"));
        assertTrue(sent.isEmpty(), "another channel");
        h.fire(announcer, new PlayerRegisterChannelEvent(notch, "warden:server"));
        assertEquals(1, sent.size());
        assertSame(plugin, sent.get(0).plugin());
        assertEquals("warden:server", sent.get(0).channel());
        assertArrayEquals(ServerHarness.SERVER.toString().getBytes(StandardCharsets.UTF_8), sent.get(0).message());
        proxy.set(false);
        h.fire(announcer, new PlayerRegisterChannelEvent(notch, "warden:server"));
        assertEquals(1, sent.size(), "not behind a proxy: nothing announced");
        assertTrue(h.records().isEmpty(), "an announcement is not a record");
    }

    @Test
    void theServerIdIsAnnouncedAtTheJoinWhenTheChannelWasRegisteredBefore() {
        ServerHarness h = new ServerHarness();
        AtomicBoolean proxy = new AtomicBoolean(true);
        ProxyAnnouncer announcer = new ProxyAnnouncer(plugin, ServerHarness.SERVER, proxy::get);
        h.fire(announcer, new PlayerJoinEvent(notch, "joined"));
        assertTrue(sent.isEmpty(), "not registered: the message would be dropped, so it waits for the registration");
        channels = Set.of("warden:server");
        h.fire(announcer, new PlayerJoinEvent(notch, "joined"));
        assertEquals(1, sent.size());
        assertEquals("warden:server", sent.get(0).channel());
        assertArrayEquals(ServerHarness.SERVER.toString().getBytes(StandardCharsets.UTF_8), sent.get(0).message());
        proxy.set(false);
        h.fire(announcer, new PlayerJoinEvent(notch, "joined"));
        assertEquals(1, sent.size(), "not behind a proxy: nothing announced");
    }
}
