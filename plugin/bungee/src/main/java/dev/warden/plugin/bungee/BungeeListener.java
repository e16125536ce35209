package dev.warden.plugin.bungee;

import dev.warden.plugin.core.Capture;
import dev.warden.plugin.core.proxy.NetworkSessions;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.function.BiPredicate;
import java.util.logging.Logger;
import net.md_5.bungee.api.CommandSender;
import net.md_5.bungee.api.connection.ProxiedPlayer;
import net.md_5.bungee.api.connection.Server;
import net.md_5.bungee.api.event.ChatEvent;
import net.md_5.bungee.api.event.PlayerDisconnectEvent;
import net.md_5.bungee.api.event.PluginMessageEvent;
import net.md_5.bungee.api.event.ServerConnectedEvent;
import net.md_5.bungee.api.plugin.Listener;
import net.md_5.bungee.event.EventHandler;
import net.md_5.bungee.event.EventPriority;

/**
 * The network's sessions, the proxy's own commands and (when config.yml turns it on) chat, on
 * BungeeCord. The same as the Velocity plugin's listener: each handler hands the event to
 * {@link NetworkSessions} or {@link Capture}; nothing here blocks. HIGHEST priority runs last.
 */
public final class BungeeListener implements Listener {
    /** Where a backend running Warden with {@code proxy: true} announces its server id. */
    public static final String CHANNEL = "warden:server";

    private final NetworkSessions sessions;
    private final Capture capture;
    private final BiPredicate<String, CommandSender> proxyHasCommand;
    private final Logger logger;

    /** {@code proxyHasCommand}: whether the proxy itself runs a command (name) for that sender. */
    public BungeeListener(NetworkSessions sessions, Capture capture, BiPredicate<String, CommandSender> proxyHasCommand,
            Logger logger) {
        this.sessions = sessions;
        this.capture = capture;
        this.proxyHasCommand = proxyHasCommand;
        this.logger = logger;
    }

    @EventHandler(priority = EventPriority.HIGHEST)
    public void onServerConnected(ServerConnectedEvent event) {
        ProxiedPlayer player = event.getPlayer();
        SocketAddress address = player.getSocketAddress();
        String ip = address instanceof InetSocketAddress inet && inet.getAddress() != null
                ? inet.getAddress().getHostAddress() : null;
        String clientVersion = player.getPendingConnection() == null ? null
                : "protocol " + player.getPendingConnection().getVersion();
        sessions.connected(player.getUniqueId(), player.getName(), ip, clientVersion,
                event.getServer().getInfo().getName());
    }

    @EventHandler(priority = EventPriority.HIGHEST)
    public void onDisconnect(PlayerDisconnectEvent event) {
        ProxiedPlayer player = event.getPlayer();
        sessions.disconnected(player.getUniqueId(), player.getName());
    }

    /**
     * A backend's announcement of its server id. Never forwarded; believed only from a backend
     * connection (a player's client could send anything on this channel).
     */
    @EventHandler(priority = EventPriority.LOWEST)
    public void onPluginMessage(PluginMessageEvent event) {
        if (!CHANNEL.equals(event.getTag())) {
            return;
        }
        event.setCancelled(true);
        if (!(event.getSender() instanceof Server backend)) {
            return;
        }
        String name = backend.getInfo().getName();
        String text = new String(event.getData(), StandardCharsets.UTF_8).strip();
        UUID id;
        try {
            id = UUID.fromString(text);
        } catch (IllegalArgumentException e) {
            logger.warning("backend " + name + " announced a server id that is not a UUID; ignored");
            return;
        }
        sessions.announced(name, id);
    }

    /**
     * A command the proxy runs itself (commands forwarded to the backend are sent by the backend),
     * or, when config.yml's capture.chat is on, a chat line.
     */
    @EventHandler(priority = EventPriority.HIGHEST)
    public void onChat(ChatEvent event) {
        if (event.isCancelled() || !(event.getSender() instanceof ProxiedPlayer player)) {
            return;
        }
        UUID uuid = player.getUniqueId();
        String message = event.getMessage();
        if (!event.isCommand()) {
            capture.chat(sessions.serverOf(uuid), uuid, player.getName(), message);
            return;
        }
        String line = message.substring(1).strip();
        int space = line.indexOf(' ');
        String name = space < 0 ? line : line.substring(0, space);
        if (!name.isEmpty() && proxyHasCommand.test(name, player)) {
            capture.command(sessions.serverOf(uuid), uuid, player.getName(), "/" + line);
        }
    }
}
