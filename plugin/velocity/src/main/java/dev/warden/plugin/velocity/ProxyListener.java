package dev.warden.plugin.velocity;

import com.velocitypowered.api.command.CommandSource;
import com.velocitypowered.api.event.PostOrder;
import com.velocitypowered.api.event.Subscribe;
import com.velocitypowered.api.event.command.CommandExecuteEvent;
import com.velocitypowered.api.event.connection.DisconnectEvent;
import com.velocitypowered.api.event.connection.PluginMessageEvent;
import com.velocitypowered.api.event.player.PlayerChatEvent;
import com.velocitypowered.api.event.player.ServerConnectedEvent;
import com.velocitypowered.api.proxy.Player;
import com.velocitypowered.api.proxy.ServerConnection;
import com.velocitypowered.api.proxy.messages.MinecraftChannelIdentifier;
import dev.warden.plugin.core.Capture;
import dev.warden.plugin.core.proxy.NetworkSessions;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.function.BiPredicate;
import java.util.logging.Logger;

/**
 * The network's sessions, the proxy's own commands and (when config.yml turns it on) chat. Each
 * handler reads the event and hands it to {@link NetworkSessions} or {@link Capture}; nothing here
 * blocks. LAST order: the outcome other plugins decided.
 */
public final class ProxyListener {
    /** Where a backend running Warden with {@code proxy: true} announces its server id. */
    public static final MinecraftChannelIdentifier CHANNEL = MinecraftChannelIdentifier.create("warden", "server");

    private final NetworkSessions sessions;
    private final Capture capture;
    private final BiPredicate<String, CommandSource> proxyHasCommand;
    private final Logger logger;

    /** {@code proxyHasCommand}: whether the proxy itself runs a command (alias) for that source. */
    public ProxyListener(NetworkSessions sessions, Capture capture, BiPredicate<String, CommandSource> proxyHasCommand,
            Logger logger) {
        this.sessions = sessions;
        this.capture = capture;
        this.proxyHasCommand = proxyHasCommand;
        this.logger = logger;
    }

    @Subscribe(order = PostOrder.LAST)
    @SuppressWarnings("deprecation") // order: deprecated for priority(), which Velocity 3.x reads only with order CUSTOM
    public void onServerConnected(ServerConnectedEvent event) {
        Player player = event.getPlayer();
        InetSocketAddress address = player.getRemoteAddress();
        String ip = address == null || address.getAddress() == null ? null : address.getAddress().getHostAddress();
        sessions.connected(player.getUniqueId(), player.getUsername(), ip,
                "protocol " + player.getProtocolVersion().getProtocol(), event.getServer().getServerInfo().getName());
    }

    @Subscribe(order = PostOrder.LAST)
    @SuppressWarnings("deprecation")
    public void onDisconnect(DisconnectEvent event) {
        Player player = event.getPlayer();
        sessions.disconnected(player.getUniqueId(), player.getUsername());
    }

    /**
     * A backend's announcement of its server id. Never forwarded; believed only from a backend
     * connection (a player's client could send anything on this channel).
     */
    @Subscribe(order = PostOrder.FIRST)
    @SuppressWarnings("deprecation")
    public void onPluginMessage(PluginMessageEvent event) {
        if (!CHANNEL.getId().equals(event.getIdentifier().getId())) {
            return;
        }
        event.setResult(PluginMessageEvent.ForwardResult.handled());
        if (!(event.getSource() instanceof ServerConnection backend)) {
            return;
        }
        String name = backend.getServerInfo().getName();
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

    /** A command the proxy runs itself; commands forwarded to the backend are sent by the backend. */
    @Subscribe(order = PostOrder.LAST)
    @SuppressWarnings("deprecation")
    public void onCommand(CommandExecuteEvent event) {
        if (!(event.getCommandSource() instanceof Player player)) {
            return;
        }
        CommandExecuteEvent.CommandResult result = event.getResult();
        if (!result.isAllowed() || result.isForwardToServer()) {
            return;
        }
        String line = result.getCommand().orElse(event.getCommand()).strip();
        int space = line.indexOf(' ');
        String alias = space < 0 ? line : line.substring(0, space);
        if (alias.isEmpty() || !proxyHasCommand.test(alias, player)) {
            return;
        }
        UUID uuid = player.getUniqueId();
        capture.command(sessions.serverOf(uuid), uuid, player.getUsername(), "/" + line);
    }

    /** Chat as the proxy sees it; sent only when config.yml's capture.chat is on (off by default). */
    @Subscribe(order = PostOrder.LAST)
    @SuppressWarnings("deprecation")
    public void onChat(PlayerChatEvent event) {
        PlayerChatEvent.ChatResult result = event.getResult();
        if (!result.isAllowed()) {
            return;
        }
        Player player = event.getPlayer();
        UUID uuid = player.getUniqueId();
        capture.chat(sessions.serverOf(uuid), uuid, player.getUsername(), result.getMessage().orElse(event.getMessage()));
    }
}
