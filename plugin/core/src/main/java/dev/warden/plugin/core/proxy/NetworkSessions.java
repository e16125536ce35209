package dev.warden.plugin.core.proxy;

import dev.warden.plugin.core.Capture;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.logging.Logger;

/**
 * A proxy's view of its players' sessions, platform-free: one network session with a stretch per
 * backend. Connecting to a backend sends a join with that backend's server id (the previous
 * stretch is closed by the service as "switched"); leaving the network sends a quit from the
 * current backend. The backend's id comes from its announcement ({@link #announced}); a join
 * whose backend has not announced one waits up to {@code wait}, then is sent with the fallback id
 * ({@link BackendIds#fallback}). Records leave in the order they happened for each player: a
 * waiting join is sent before that player's next join or quit. Safe from any thread.
 */
public final class NetworkSessions {
    private final UUID proxyId;
    private final BackendIds ids;
    private final Capture capture;
    private final Duration wait;
    private final Logger logger;
    private final Map<UUID, Stretch> current = new HashMap<>();
    private final Set<String> warned = new HashSet<>();

    /** Where a player is; {@code serverId} null while the join waits for the backend's id. */
    private static final class Stretch {
        final String backend;
        final String name;
        final String ip;
        final String clientVersion;
        final Instant joinedAt;
        UUID serverId;

        Stretch(String backend, String name, String ip, String clientVersion, Instant joinedAt) {
            this.backend = backend;
            this.name = name;
            this.ip = ip;
            this.clientVersion = clientVersion;
            this.joinedAt = joinedAt;
        }
    }

    public NetworkSessions(UUID proxyId, BackendIds ids, Capture capture, Duration wait, Logger logger) {
        this.proxyId = proxyId;
        this.ids = ids;
        this.capture = capture;
        this.wait = wait;
        this.logger = logger;
    }

    /** The player is now on {@code backend} (a first connection or a switch). */
    public synchronized void connected(UUID player, String name, String ip, String clientVersion, String backend) {
        Stretch before = current.get(player);
        if (before != null) {
            settle(player, before);
        }
        Stretch now = new Stretch(backend, name, ip, clientVersion, capture.now());
        current.put(player, now);
        UUID id = ids.get(backend);
        if (id != null) {
            send(player, now, id);
        }
    }

    /** The player left the network (from whatever backend they were on, if any). */
    public synchronized void disconnected(UUID player, String name) {
        Stretch last = current.remove(player);
        if (last == null) {
            return;
        }
        settle(player, last);
        capture.quit(last.serverId, player, name);
    }

    /** A backend announced its server id: joins waiting for it are sent now, with their own time. */
    public synchronized void announced(String backend, UUID serverId) {
        ids.put(backend, serverId);
        current.forEach((player, s) -> {
            if (s.serverId == null && s.backend.equals(backend)) {
                send(player, s, serverId);
            }
        });
    }

    /** Sends the joins that waited longer than allowed, with their backend's fallback id. */
    public synchronized void expire() {
        Instant cutoff = capture.now().minus(wait);
        current.forEach((player, s) -> {
            if (s.serverId == null && !s.joinedAt.isAfter(cutoff)) {
                settle(player, s);
            }
        });
    }

    /**
     * The server id a player's commands and chat are sent with: their current backend's (its
     * fallback while its join waits), or the proxy's own when they are on no backend.
     */
    public synchronized UUID serverOf(UUID player) {
        Stretch s = current.get(player);
        if (s == null) {
            return proxyId;
        }
        if (s.serverId != null) {
            return s.serverId;
        }
        UUID known = ids.get(s.backend);
        return known != null ? known : BackendIds.fallback(proxyId, s.backend);
    }

    /** Joins still waiting for their backend's id (for /warden status and tests). */
    public synchronized int waiting() {
        return (int) current.values().stream().filter(s -> s.serverId == null).count();
    }

    /** Sends a waiting join now: with the id announced since, else the fallback. */
    private void settle(UUID player, Stretch s) {
        if (s.serverId != null) {
            return;
        }
        UUID id = ids.get(s.backend);
        if (id == null) {
            id = BackendIds.fallback(proxyId, s.backend);
            if (warned.add(s.backend)) {
                logger.warning("backend " + s.backend + " does not run Warden with proxy: true; its sessions are sent"
                        + " with server id " + id + " (no heartbeat, chat or commands come from it)");
            }
        }
        send(player, s, id);
    }

    private void send(UUID player, Stretch s, UUID serverId) {
        s.serverId = serverId;
        capture.join(serverId, player, s.name, s.ip, s.clientVersion, s.joinedAt);
    }
}
