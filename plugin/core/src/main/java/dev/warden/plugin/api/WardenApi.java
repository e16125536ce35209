package dev.warden.plugin.api;

import java.util.Map;
import java.util.UUID;

/**
 * Warden's public API for other plugins: queue a custom event for the next sync cycle.
 *
 * <p>Get it from the server's services manager
 * ({@code Bukkit.getServicesManager().load(WardenApi.class)}) or, on Paper and Spigot, through
 * the static {@code dev.warden.plugin.paper.Warden#track(Player, String, Map)}. Every call is
 * non-blocking: it validates, takes a copy of the properties, stamps the event's id (a UUID v7)
 * and time, and queues it; no network or disk access happens on the caller's thread. Safe from
 * any thread, the server thread and Folia's region threads included.
 */
public interface WardenApi {

    /**
     * Queues a custom event.
     *
     * @param playerUuid the player the event is tied to
     * @param name the event name: {@code ^[a-z0-9_]{1,64}$}, not starting with a reserved prefix
     *     ({@code session_}, {@code punish_}, {@code chat_}, {@code rank_}, {@code block_})
     * @param properties any JSON-like values (strings, numbers, booleans, null, nested maps and
     *     lists), at most 64 KiB serialized and 64 levels deep; may be null
     * @return true when queued, false when the in-memory queue is full (the event is dropped and
     *     counted in {@code /warden status})
     * @throws IllegalArgumentException when the name or the properties break the rules above;
     *     the message says which rule
     */
    boolean track(UUID playerUuid, String name, Map<String, ?> properties);

    /** {@link #track(UUID, String, Map)} without properties. */
    default boolean track(UUID playerUuid, String name) {
        return track(playerUuid, name, null);
    }
}
