package dev.warden.plugin.paper.listener;

import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.bukkit.event.EventHandler;
import org.bukkit.event.EventPriority;
import org.bukkit.event.Listener;
import org.bukkit.event.player.PlayerRegisterChannelEvent;
import org.bukkit.plugin.Plugin;

/**
 * Behind a proxy ({@code proxy: true}): tells the proxy this server's id through the joining
 * player's connection, on the channel {@value #CHANNEL}, so the proxy sends that player's joins
 * with it. Sent when the proxy registers the channel for the player (a proxy running Warden does
 * so on every connection to a backend): the server drops a plugin message on a channel the other
 * end has not registered, so a message sent at the join itself could be lost.
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
        if (CHANNEL.equals(event.getChannel()) && behindProxy.getAsBoolean()) {
            event.getPlayer().sendPluginMessage(plugin, CHANNEL, announcement.clone());
        }
    }
}
