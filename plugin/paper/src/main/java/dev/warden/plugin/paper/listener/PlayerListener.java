package dev.warden.plugin.paper.listener;

import dev.warden.plugin.core.Capture;
import java.net.InetSocketAddress;
import java.util.function.BooleanSupplier;
import org.bukkit.entity.Player;
import org.bukkit.event.EventHandler;
import org.bukkit.event.EventPriority;
import org.bukkit.event.Listener;
import org.bukkit.event.player.PlayerCommandPreprocessEvent;
import org.bukkit.event.player.PlayerJoinEvent;
import org.bukkit.event.player.PlayerKickEvent;
import org.bukkit.event.player.PlayerQuitEvent;

/**
 * Joins, quits, commands and kicks. Each handler reads the event, builds a record and queues it
 * ({@link Capture}); nothing here blocks. MONITOR priority: the outcome other plugins decided.
 */
public final class PlayerListener implements Listener {
    private final Capture capture;
    private final boolean paperApi;
    private final BooleanSupplier punishmentPluginOn;
    private final BooleanSupplier behindProxy;

    /** {@code paperApi}: the server has Paper's additions (Player#getProtocolVersion, kick causes). */
    public PlayerListener(Capture capture, boolean paperApi) {
        this(capture, paperApi, () -> false, () -> false);
    }

    /**
     * {@code punishmentPluginOn}: true while a punishment-plugin integration sends that plugin's
     * bans and kicks itself; kicks made by plugins are then left to it (see {@link #onKick}).
     * {@code behindProxy}: config.yml's {@code proxy: true}; the proxy then sends this server's
     * joins and quits, and this server sends none ({@link ProxyAnnouncer}).
     */
    public PlayerListener(Capture capture, boolean paperApi, BooleanSupplier punishmentPluginOn,
            BooleanSupplier behindProxy) {
        this.capture = capture;
        this.paperApi = paperApi;
        this.punishmentPluginOn = punishmentPluginOn;
        this.behindProxy = behindProxy;
    }

    @EventHandler(priority = EventPriority.MONITOR)
    public void onJoin(PlayerJoinEvent event) {
        if (behindProxy.getAsBoolean()) {
            return;
        }
        Player player = event.getPlayer();
        InetSocketAddress address = player.getAddress();
        String ip = address == null || address.getAddress() == null ? null : address.getAddress().getHostAddress();
        String clientVersion = paperApi ? "protocol " + player.getProtocolVersion() : null;
        capture.join(player.getUniqueId(), player.getName(), ip, clientVersion);
    }

    @EventHandler(priority = EventPriority.MONITOR)
    public void onQuit(PlayerQuitEvent event) {
        if (behindProxy.getAsBoolean()) {
            return;
        }
        Player player = event.getPlayer();
        capture.quit(player.getUniqueId(), player.getName());
    }

    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onCommand(PlayerCommandPreprocessEvent event) {
        Player player = event.getPlayer();
        capture.command(player.getUniqueId(), player.getName(), event.getMessage());
    }

    /**
     * A kick, or a ban as far as the API shows one: on Paper a kick whose cause is BANNED or
     * IP_BANNED (the /ban and /ban-ip commands) is recorded as a ban, permanent unless a
     * punishment-plugin integration says otherwise.
     *
     * <p>While a punishment-plugin integration is on, that plugin's own records are the
     * punishment log: its bans and kicks reach the server as kicks made by a plugin, which would
     * otherwise be sent twice. So only the server's own kicks and bans (on Paper: the causes
     * KICK_COMMAND, BANNED and IP_BANNED, the vanilla /kick, /ban and /ban-ip) are still sent
     * from here; on Spigot, which has no causes, none is.
     */
    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    @SuppressWarnings("deprecation") // getReason(): the String form exists on Spigot and Paper
    public void onKick(PlayerKickEvent event) {
        Player player = event.getPlayer();
        String type = "kick";
        boolean ipBased = false;
        boolean vanilla = false;
        if (paperApi) {
            PlayerKickEvent.Cause cause = event.getCause();
            vanilla = cause == PlayerKickEvent.Cause.KICK_COMMAND || cause == PlayerKickEvent.Cause.BANNED
                    || cause == PlayerKickEvent.Cause.IP_BANNED;
            if (cause == PlayerKickEvent.Cause.BANNED || cause == PlayerKickEvent.Cause.IP_BANNED) {
                type = "ban";
                ipBased = cause == PlayerKickEvent.Cause.IP_BANNED;
            }
        }
        if (!vanilla && punishmentPluginOn.getAsBoolean()) {
            return;
        }
        capture.punishment(player.getUniqueId(), player.getName(), type, stripColors(event.getReason()),
                null, null, null, ipBased, "minecraft");
    }

    /** Removes legacy colour codes (§x) from a kick message. */
    static String stripColors(String s) {
        if (s == null) {
            return null;
        }
        return s.replaceAll("(?i)\u00A7[0-9A-FK-ORX]", "");
    }
}
