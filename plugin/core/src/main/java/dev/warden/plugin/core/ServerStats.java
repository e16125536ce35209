package dev.warden.plugin.core;

/**
 * What the platform tells the core for heartbeats (and {@link #tps()} for anti-cheat flags). Called
 * on the delivery thread and the anti-cheats' threads: implementations return values sampled on the
 * server's own thread, never call the server API from here.
 */
public interface ServerStats {
    double tps();

    int playerCount();

    int maxPlayers();

    /** The server software and version, e.g. "Paper 1.21.4". */
    String version();

    /** The default display name when config.yml sets none. */
    String defaultName();

    /** "proxy" for a proxy; null for a game server (the heartbeat then has no role). */
    default String role() {
        return null;
    }
}
