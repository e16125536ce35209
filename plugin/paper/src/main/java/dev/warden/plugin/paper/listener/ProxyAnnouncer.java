package dev.warden.plugin.paper.listener;

import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.bukkit.event.EventHandler;
import org.bukkit.event.EventPriority;
import org.bukkit.event.Listener;
import org.bukkit.entity.Player;
import org.bukkit.event.player.PlayerJoinEvent;
import org.bukkit.event.player.PlayerRegisterChannelEvent;
import org.bukkit.plugin.Plugin;

/**
 * Behind a proxy ({@code proxy: true}): tells the proxy this server's id through the joining
 * player's connection, on the channel {@value #CHANNEL}, so the proxy sends that player's joins
 * with it. The server drops a plugin message on a channel the other end has not registered, and a
 * proxy running Warden registers it on every connection to a backend: so the id is sent when that
 * registration arrives, or at the join when it arrived before (during the connection's
 * configuration, where the server fires no event for it). Sending it twice is harmless.
 */
public final class ProxyAnnouncer implements Listener {
    public static final String CHANNEL = "warden:server";

    private final Plugin plugin;
    private final byte[] announcement;
    private final BooleanSupplier behindProxy;

    public ProxyAnnouncer(Plugin plugin, UUID serverId, BooleanSupplier behindProxy) {
        this.plugin = plugin;
        this.announcement = serverId.toString().getBytes(StandardCharsets.UTF_8);
        this.behindProxy = behindProxy;
    }

    @EventHandler(priority = EventPriority.MONITOR)
    public void onRegister(PlayerRegisterChannelEvent event) {
        if (CHANNEL.equals(event.getChannel())) {
            announce(event.getPlayer());
        }
    }

    @EventHandler(priority = EventPriority.MONITOR)
    public void onJoin(PlayerJoinEvent event) {
        Player player = event.getPlayer();
        if (behindProxy.getAsBoolean() && player.getListeningPluginChannels().contains(CHANNEL)) {
            announce(player);
        }
    }

    private void announce(Player player) {
        if (behindProxy.getAsBoolean()) {
            player.sendPluginMessage(plugin, CHANNEL, announcement.clone());
        }
    }
}
