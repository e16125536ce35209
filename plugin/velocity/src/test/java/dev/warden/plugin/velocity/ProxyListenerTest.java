package dev.warden.plugin.velocity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.velocitypowered.api.command.CommandSource;
import com.velocitypowered.api.event.PostOrder;
import com.velocitypowered.api.event.Subscribe;
import com.velocitypowered.api.event.command.CommandExecuteEvent;
import com.velocitypowered.api.event.connection.DisconnectEvent;
import com.velocitypowered.api.event.connection.PluginMessageEvent;
import com.velocitypowered.api.event.player.PlayerChatEvent;
import com.velocitypowered.api.event.player.ServerConnectedEvent;
import com.velocitypowered.api.network.ProtocolVersion;
import com.velocitypowered.api.proxy.Player;
import com.velocitypowered.api.proxy.ServerConnection;
import com.velocitypowered.api.proxy.messages.MinecraftChannelIdentifier;
import com.velocitypowered.api.proxy.server.RegisteredServer;
import com.velocitypowered.api.proxy.server.ServerInfo;
import dev.warden.plugin.core.Capture;
import dev.warden.plugin.core.EventQueue;
import dev.warden.plugin.core.Records;
import dev.warden.plugin.core.WardenConfig;
import dev.warden.plugin.core.WardenRecord;
import dev.warden.plugin.core.proxy.BackendIds;
import dev.warden.plugin.core.proxy.NetworkSessions;
import java.io.IOException;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Velocity's events through the proxy listener, and the records that come out. */
class ProxyListenerTest {
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
                return java.lang.reflect.InvocationHandler.invokeDefault(self, m, args);
            }
            throw new UnsupportedOperationException(m.getName());
        });
    }

    static Player player() {
        return fake(Player.class, Map.of(
                "getUniqueId", NOTCH,
                "getUsername", "Notch",
                "getRemoteAddress", new InetSocketAddress("203.0.113.7", 51234),
                "getProtocolVersion", ProtocolVersion.MINECRAFT_1_21));
    }

    static RegisteredServer server(String name) {
        return fake(RegisteredServer.class, Map.of("getServerInfo", new ServerInfo(name, new InetSocketAddress("10.0.0.2", 25565))));
    }

    static ServerConnection connection(String name) {
        return fake(ServerConnection.class, Map.of("getServerInfo", new ServerInfo(name, new InetSocketAddress("10.0.0.2", 25565))));
    }

    record Wired(ProxyListener listener, NetworkSessions sessions, Capture capture) {}

    Wired wire(WardenConfig config, Set<String> proxyCommands) throws IOException {
        Capture capture = new Capture(queue, PROXY, config, Clock.systemUTC());
        NetworkSessions sessions = new NetworkSessions(PROXY, BackendIds.load(dir, logger), capture,
                Duration.ofSeconds(10), logger);
        ProxyListener listener = new ProxyListener(sessions, capture,
                (alias, source) -> proxyCommands.contains(alias), logger);
        return new Wired(listener, sessions, capture);
    }

    Wired wire() throws IOException {
        return wire(WardenConfig.defaults("http://x", "wdn_plugin_x"), Set.of("server", "glist"));
    }

    /** Fires an event the way Velocity does: every @Subscribe method taking its type. */
    static void fire(Object listener, Object event) {
        int handled = 0;
        for (Method m : listener.getClass().getMethods()) {
            if (m.getAnnotation(Subscribe.class) != null && m.getParameterCount() == 1
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

    static PluginMessageEvent announcement(Object source, String text) {
        return new PluginMessageEvent((com.velocitypowered.api.proxy.messages.ChannelMessageSource) source,
                fake(com.velocitypowered.api.proxy.messages.ChannelMessageSink.class, Map.of()),
                MinecraftChannelIdentifier.create("warden", "server"), text.getBytes(StandardCharsets.UTF_8));
    }

    List<WardenRecord> records() {
        return queue.drain(1000);
    }

    @Test
    void aSwitchBetweenAnnouncedBackendsIsAJoinPerBackendThenTheQuit() throws IOException {
        Wired w = wire();
        Player notch = player();
        fire(w.listener, announcement(connection("lobby"), LOBBY.toString()));
        fire(w.listener, new ServerConnectedEvent(notch, server("lobby"), null));
        fire(w.listener, announcement(connection("survival"), SURVIVAL.toString()));
        fire(w.listener, new ServerConnectedEvent(notch, server("survival"), server("lobby")));
        fire(w.listener, new DisconnectEvent(notch, DisconnectEvent.LoginStatus.SUCCESSFUL_LOGIN));
        List<WardenRecord> r = records();
        assertEquals(3, r.size(), r.toString());
        Records.Session join = (Records.Session) r.get(0);
        assertEquals("join", join.event());
        assertEquals(LOBBY, join.serverId());
        assertEquals(NOTCH, join.playerUuid());
        assertEquals("Notch", join.playerName());
        assertEquals("203.0.113.7", join.ip(), "the proxy sends the real address");
        assertEquals("protocol 767", join.clientVersion());
        Records.Session second = (Records.Session) r.get(1);
        assertEquals("join", second.event());
        assertEquals(SURVIVAL, second.serverId());
        assertEquals("203.0.113.7", second.ip());
        Records.Session quit = (Records.Session) r.get(2);
        assertEquals("quit", quit.event());
        assertEquals(SURVIVAL, quit.serverId());
        assertNull(quit.ip());
    }

    @Test
    void theAnnouncementIsHandledAtTheProxyAndBelievedOnlyFromABackend() throws IOException {
        Wired w = wire();
        PluginMessageEvent fromClient = announcement(player(), LOBBY.toString());
        fire(w.listener, fromClient);
        assertFalse(fromClient.getResult().isAllowed(), "never forwarded");
        fire(w.listener, new ServerConnectedEvent(player(), server("lobby"), null));
        assertTrue(records().isEmpty(), "a client's claim is not believed: the join still waits");
        PluginMessageEvent fromBackend = announcement(connection("lobby"), LOBBY + "\n");
        fire(w.listener, fromBackend);
        assertFalse(fromBackend.getResult().isAllowed());
        Records.Session join = (Records.Session) records().get(0);
        assertEquals(LOBBY, join.serverId());
        PluginMessageEvent garbage = announcement(connection("lobby"), "not a uuid");
        fire(w.listener, garbage);
        assertFalse(garbage.getResult().isAllowed());
        assertEquals(LOBBY, BackendIds.load(dir, logger).get("lobby"), "a bad announcement changes nothing");
        PluginMessageEvent other = new PluginMessageEvent(connection("lobby"),
                fake(com.velocitypowered.api.proxy.messages.ChannelMessageSink.class, Map.of()),
                MinecraftChannelIdentifier.create("bungeecord", "main"), new byte[] {1});
        fire(w.listener, other);
        assertTrue(other.getResult().isAllowed(), "other channels are left alone");
    }

    @Test
    void onlyTheProxysOwnCommandsAreSentRedactedWithTheBackendsId() throws IOException {
        Wired w = wire();
        Player notch = player();
        fire(w.listener, announcement(connection("lobby"), LOBBY.toString()));
        fire(w.listener, new ServerConnectedEvent(notch, server("lobby"), null));
        records();
        fire(w.listener, new CommandExecuteEvent(notch, "server survival"));
        fire(w.listener, new CommandExecuteEvent(notch, "spawn"));
        CommandExecuteEvent forwarded = new CommandExecuteEvent(notch, "glist");
        forwarded.setResult(CommandExecuteEvent.CommandResult.forwardToServer());
        fire(w.listener, forwarded);
        CommandExecuteEvent denied = new CommandExecuteEvent(notch, "glist");
        denied.setResult(CommandExecuteEvent.CommandResult.denied());
        fire(w.listener, denied);
        CommandSource console = fake(CommandSource.class, Map.of());
        fire(w.listener, new CommandExecuteEvent(console, "glist"));
        List<WardenRecord> r = records();
        assertEquals(1, r.size(), r.toString());
        Records.Chat c = (Records.Chat) r.get(0);
        assertEquals("command", c.entryType());
        assertEquals("/server survival", c.message());
        assertEquals(LOBBY, c.serverId());
        assertEquals(NOTCH, c.playerUuid());
        assertEquals("Notch", c.playerName());
        assertNull(c.channel());

        Wired login = wire(WardenConfig.defaults("http://x", "wdn_plugin_x"), Set.of("login"));
        fire(login.listener, new CommandExecuteEvent(notch, "login hunter2"));
        Records.Chat redacted = (Records.Chat) records().get(0);
        assertEquals("/login [redacted]", redacted.message());
        assertEquals(PROXY, redacted.serverId(), "on no backend: the proxy's own id");
    }

    @Test
    void chatIsSentOnlyWhenTurnedOn() throws IOException {
        WardenConfig d = WardenConfig.defaults("http://x", "wdn_plugin_x");
        WardenConfig off = new WardenConfig(d.baseUrl(), d.pluginKey(), 15, null, 1000, 64, 8, 5, 10, 300,
                false, true, true, true, false, false, "global", d.redactCommands(), List.of());
        Player notch = player();
        Wired quiet = wire(off, Set.of());
        fire(quiet.listener, new PlayerChatEvent(notch, "hello"));
        assertTrue(records().isEmpty());
        Wired on = wire(d, Set.of());
        fire(on.listener, new PlayerChatEvent(notch, "hello"));
        Records.Chat c = (Records.Chat) records().get(0);
        assertEquals("chat", c.entryType());
        assertEquals("hello", c.message());
        assertEquals("global", c.channel());
        assertEquals(PROXY, c.serverId());
    }

    @Test
    void handlersRunLastExceptTheAnnouncementWhichRunsFirst() throws NoSuchMethodException {
        assertEquals(PostOrder.FIRST, order("onPluginMessage", PluginMessageEvent.class));
        assertEquals(PostOrder.LAST, order("onServerConnected", ServerConnectedEvent.class));
        assertEquals(PostOrder.LAST, order("onCommand", CommandExecuteEvent.class));
    }

    @SuppressWarnings("deprecation")
    static PostOrder order(String name, Class<?> event) throws NoSuchMethodException {
        return ProxyListener.class.getMethod(name, event).getAnnotation(Subscribe.class).order();
    }
}
