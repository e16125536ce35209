package dev.warden.plugin.paper;

import dev.warden.plugin.core.ServerStats;
import org.bukkit.Server;

/**
 * Samples what heartbeats need on the server thread, every second (20 ticks), into fields the
 * delivery thread reads. TPS is Paper's one-minute average where the API has it (Paper, Purpur);
 * elsewhere (Spigot, and Folia, whose getTPS is not server-wide) it is measured here, from the time
 * 20 ticks of this task took, averaged over the last minute.
 */
final class TickSampler implements Runnable, ServerStats {
    static final long PERIOD_TICKS = 20;

    private final Server server;
    private final String version;
    private final boolean measureTps;
    private final double[] window = new double[60];
    private int windowFilled;
    private int windowNext;
    private long lastNanos;

    private volatile double tps = 20.0;
    private volatile int playerCount;
    private volatile int maxPlayers;

    TickSampler(Server server, boolean folia) {
        this.server = server;
        this.version = server.getName() + " " + server.getBukkitVersion().split("-")[0];
        this.measureTps = folia || !hasPaperTps(server);
        this.maxPlayers = server.getMaxPlayers();
    }

    private static boolean hasPaperTps(Server server) {
        try {
            server.getTPS();
            return true;
        } catch (NoSuchMethodError | UnsupportedOperationException e) {
            return false;
        }
    }

    @Override
    public void run() {
        long now = System.nanoTime();
        if (measureTps) {
            if (lastNanos != 0) {
                double seconds = (now - lastNanos) / 1e9;
                window[windowNext] = Math.min(20.0, PERIOD_TICKS / seconds);
                windowNext = (windowNext + 1) % window.length;
                windowFilled = Math.min(windowFilled + 1, window.length);
                double sum = 0;
                for (int i = 0; i < windowFilled; i++) {
                    sum += window[i];
                }
                tps = sum / windowFilled;
            }
            lastNanos = now;
        } else {
            tps = server.getTPS()[0];
        }
        playerCount = server.getOnlinePlayers().size();
        maxPlayers = server.getMaxPlayers();
    }

    @Override
    public double tps() {
        return tps;
    }

    @Override
    public int playerCount() {
        return playerCount;
    }

    @Override
    public int maxPlayers() {
        return maxPlayers;
    }

    @Override
    public String version() {
        return version;
    }

    @Override
    public String defaultName() {
        return server.getName();
    }
}
