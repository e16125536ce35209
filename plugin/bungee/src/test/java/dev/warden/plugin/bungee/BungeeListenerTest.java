package dev.warden.plugin.bungee;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.warden.plugin.core.Capture;
import dev.warden.plugin.core.EventQueue;
import dev.warden.plugin.core.Records;
import dev.warden.plugin.core.WardenConfig;
import dev.warden.plugin.core.WardenRecord;
import dev.warden.plugin.core.proxy.BackendIds;
import dev.warden.plugin.core.proxy.NetworkSessions;
import java.io.IOException;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.logging.Logger;
import net.md_5.bungee.api.config.ServerInfo;
import net.md_5.bungee.api.connection.Connection;
import net.md_5.bungee.api.connection.PendingConnection;
import net.md_5.bungee.api.connection.ProxiedPlayer;
import net.md_5.bungee.api.connection.Server;
import net.md_5.bungee.api.event.ChatEvent;
import net.md_5.bungee.api.event.PlayerDisconnectEvent;
import net.md_5.bungee.api.event.PluginMessageEvent;
import net.md_5.bungee.api.event.ServerConnectedEvent;
import net.md_5.bungee.event.EventHandler;
import net.md_5.bungee.event.EventPriority;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** BungeeCord's events (the real API's classes) through the proxy listener, and the records that come out. */
class BungeeListenerTest {
    static final UUID PROXY = UUID.fromString("0190a5f2-0000-7000-8000-0000000000ff");
    static final UUID LOBBY = UUID.fromString("0190a5f2-0000-7000-8000-00000000000a");
    static final UUID SURVIVAL = UUID.fromString("0190a5f2-0000-7000-8000-00000000000b");
    static final UUID NOTCH = UUID.fromString("069a79f4-44e9-4726-a5be-fca90e38aaf5");

    @TempDir
    Path dir;

    final EventQueue queue = new EventQueue(1000);
    final Logger logger = Logger.getAnonymousLogger();

    /** An interface implemented by a handler that answers from a map of method name to value. */
    @SuppressWarnings("unchecked")
    static <T> T fake(Class<T> type, Map<String, Object> answers) {
        return (T) Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (self, m, args) -> {
            if (m.getName().equals("toString")) {
                return type.getSimpleName();
            }
            if (answers.containsKey(m.getName())) {
                return answers.get(m.getName());
            }
            if (m.isDefault()) {
                return InvocationHandler.invokeDefault(self, m, args);
            }
            throw new UnsupportedOperationException(m.getName());
        });
    }

    static final ProxiedPlayer NOTCH_PLAYER = fake(ProxiedPlayer.class, Map.of(
            "getUniqueId", NOTCH,
            "getName", "Notch",
            "getSocketAddress", new InetSocketAddress("203.0.113.7", 51234),
            "getPendingConnection", fake(PendingConnection.class, Map.of("getVersion", 767))));

    static Server backend(String name) {
        return fake(Server.class, Map.of("getInfo", fake(ServerInfo.class, Map.of("getName", name))));
    }

    BungeeListener listener(WardenConfig config, Set<String> proxyCommands) throws IOException {
        Capture capture = new Capture(queue, PROXY, config, Clock.systemUTC());
        NetworkSessions sessions = new NetworkSessions(PROXY, BackendIds.load(dir, logger), capture,
                Duration.ofSeconds(10), logger);
        return new BungeeListener(sessions, capture, (name, sender) -> proxyCommands.contains(name), logger);
    }

    BungeeListener listener() throws IOException {
        return listener(WardenConfig.defaults("http://x", "wdn_plugin_x"), Set.of("server", "glist"));
    }

    /** Fires an event the way BungeeCord does: every @EventHandler method taking its type. */
    static void fire(Object listener, Object event) {
        int handled = 0;
        for (Method m : listener.getClass().getMethods()) {
            if (m.getAnnotation(EventHandler.class) != null && m.getParameterCount() == 1
                    && m.getParameterTypes()[0].isInstance(event)) {
                handled++;
                try {
                    m.invoke(listener, event);
                } catch (ReflectiveOperationException e) {
                    throw new AssertionError("handler " + m.getName() + " threw", e.getCause());
                }
            }
        }
        assertEquals(1, handled, "handlers for " + event.getClass().getSimpleName());
    }

    static PluginMessageEvent announcement(Connection from, String text) {
        return new PluginMessageEvent(from, NOTCH_PLAYER, "warden:server", text.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void aSwitchBetweenAnnouncedBackendsIsAJoinPerBackendThenTheQuit() throws IOException {
        BungeeListener l = listener();
        fire(l, announcement(backend("lobby"), LOBBY.toString()));
        fire(l, new ServerConnectedEvent(NOTCH_PLAYER, backend("lobby")));
        fire(l, announcement(backend("survival"), SURVIVAL.toString()));
        fire(l, new ServerConnectedEvent(NOTCH_PLAYER, backend("survival")));
        fire(l, new PlayerDisconnectEvent(NOTCH_PLAYER));
        List<WardenRecord> r = queue.drain(100);
        assertEquals(3, r.size(), r.toString());
        Records.Session join = (Records.Session) r.get(0);
        assertEquals("join", join.event());
        assertEquals(LOBBY, join.serverId());
        assertEquals(NOTCH, join.playerUuid());
        assertEquals("Notch", join.playerName());
        assertEquals("203.0.113.7", join.ip());
        assertEquals("protocol 767", join.clientVersion());
        Records.Session second = (Records.Session) r.get(1);
        assertEquals("join", second.event());
        assertEquals(SURVIVAL, second.serverId());
        Records.Session quit = (Records.Session) r.get(2);
        assertEquals("quit", quit.event());
        assertEquals(SURVIVAL, quit.serverId());
        assertNull(quit.ip());
    }

    @Test
    void theAnnouncementIsCancelledAndBelievedOnlyFromABackend() throws IOException {
        BungeeListener l = listener();
        PluginMessageEvent fromClient = announcement(NOTCH_PLAYER, LOBBY.toString());
        fire(l, fromClient);
        assertTrue(fromClient.isCancelled(), "never forwarded");
        fire(l, new ServerConnectedEvent(NOTCH_PLAYER, backend("lobby")));
        assertTrue(queue.drain(100).isEmpty(), "a client's claim is not believed");
        PluginMessageEvent fromBackend = announcement(backend("lobby"), LOBBY.toString());
        fire(l, fromBackend);
        assertTrue(fromBackend.isCancelled());
        assertEquals(LOBBY, ((Records.Session) queue.drain(100).get(0)).serverId());
        PluginMessageEvent other = new PluginMessageEvent(backend("lobby"), NOTCH_PLAYER, "bungeecord:main", new byte[] {1});
        fire(l, other);
        assertFalse(other.isCancelled(), "other channels are left alone");
    }

    @Test
    void onlyTheProxysOwnCommandsAreSentAndChatOnlyWhenTurnedOn() throws IOException {
        WardenConfig d = WardenConfig.defaults("http://x", "wdn_plugin_x");
        WardenConfig noChat = new WardenConfig(d.baseUrl(), d.pluginKey(), 15, null, 1000, 64, 8, 5, 10, 300,
                false, true, true, true, false, false, "global", d.redactCommands(), List.of());
        BungeeListener l = listener(noChat, Set.of("server", "login"));
        fire(l, announcement(backend("lobby"), LOBBY.toString()));
        fire(l, new ServerConnectedEvent(NOTCH_PLAYER, backend("lobby")));
        queue.drain(100);
        fire(l, new ChatEvent(NOTCH_PLAYER, backend("lobby"), "/server survival"));
        fire(l, new ChatEvent(NOTCH_PLAYER, backend("lobby"), "/spawn"));
        fire(l, new ChatEvent(NOTCH_PLAYER, backend("lobby"), "/login hunter2"));
        ChatEvent cancelled = new ChatEvent(NOTCH_PLAYER, backend("lobby"), "/server lobby");
        cancelled.setCancelled(true);
        fire(l, cancelled);
        fire(l, new ChatEvent(NOTCH_PLAYER, backend("lobby"), "hello"));
        fire(l, new ChatEvent(fake(Connection.class, Map.of()), backend("lobby"), "/server survival"));
        List<WardenRecord> r = queue.drain(100);
        assertEquals(2, r.size(), r.toString());
        Records.Chat server = (Records.Chat) r.get(0);
        assertEquals("command", server.entryType());
        assertEquals("/server survival", server.message());
        assertEquals(LOBBY, server.serverId());
        assertEquals(NOTCH, server.playerUuid());
        assertEquals("/login [redacted]", ((Records.Chat) r.get(1)).message());

        BungeeListener chatty = listener(d, Set.of());
        fire(chatty, new ServerConnectedEvent(NOTCH_PLAYER, backend("lobby")));
        queue.drain(100);
        fire(chatty, new ChatEvent(NOTCH_PLAYER, backend("lobby"), "hello"));
        Records.Chat chat = (Records.Chat) queue.drain(100).get(0);
        assertEquals("chat", chat.entryType());
        assertEquals("hello", chat.message());
        assertEquals(LOBBY, chat.serverId(), "the backend the player is on");
    }

    @Test
    void theAnnouncementRunsFirstAndEverythingElseLast() throws NoSuchMethodException {
        assertEquals(EventPriority.LOWEST, priority("onPluginMessage", PluginMessageEvent.class));
        assertEquals(EventPriority.HIGHEST, priority("onServerConnected", ServerConnectedEvent.class));
        assertEquals(EventPriority.HIGHEST, priority("onChat", ChatEvent.class));
    }

    static byte priority(String name, Class<?> event) throws NoSuchMethodException {
        return BungeeListener.class.getMethod(name, event).getAnnotation(EventHandler.class).priority();
    }
}
