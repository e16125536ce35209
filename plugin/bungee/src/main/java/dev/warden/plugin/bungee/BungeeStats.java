package dev.warden.plugin.bungee;

import dev.warden.plugin.core.ServerStats;
import net.md_5.bungee.api.ProxyServer;

/**
 * The proxy's heartbeat: its own online players (every backend's, counted once) and role "proxy".
 * A proxy has no game ticks, so its TPS is sent as 20.0.
 */
final class BungeeStats implements ServerStats {
    private final ProxyServer proxy;

    BungeeStats(ProxyServer proxy) {
        this.proxy = proxy;
    }

    @Override
    public double tps() {
        return 20.0;
    }

    @Override
    public int playerCount() {
        return proxy.getOnlineCount();
    }

    @Override
    public int maxPlayers() {
        return proxy.getConfig().getPlayerLimit();
    }

    @Override
    public String version() {
        return proxy.getName() + " " + proxy.getVersion();
    }

    @Override
    public String defaultName() {
        return proxy.getName();
    }

    @Override
    public String role() {
        return "proxy";
    }
}
