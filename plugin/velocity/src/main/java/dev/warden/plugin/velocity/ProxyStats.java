package dev.warden.plugin.velocity;

import com.velocitypowered.api.proxy.ProxyServer;
import com.velocitypowered.api.util.ProxyVersion;
import dev.warden.plugin.core.ServerStats;

/**
 * The proxy's heartbeat: its own online players (every backend's, counted once) and role "proxy".
 * A proxy has no game ticks, so its TPS is sent as 20.0. Velocity's player count and version are
 * safe to read from the delivery thread.
 */
final class ProxyStats implements ServerStats {
    private final ProxyServer server;

    ProxyStats(ProxyServer server) {
        this.server = server;
    }

    @Override
    public double tps() {
        return 20.0;
    }

    @Override
    public int playerCount() {
        return server.getPlayerCount();
    }

    @Override
    public int maxPlayers() {
        return server.getConfiguration().getShowMaxPlayers();
    }

    @Override
    public String version() {
        ProxyVersion v = server.getVersion();
        return v.getName() + " " + v.getVersion();
    }

    @Override
    public String defaultName() {
        return server.getVersion().getName();
    }

    @Override
    public String role() {
        return "proxy";
    }
}
