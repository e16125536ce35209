package dev.warden.plugin.paper;

import dev.warden.plugin.api.WardenApi;
import java.util.Map;
import org.bukkit.entity.Player;

/**
 * The static entry point for other plugins on Paper, Spigot, Purpur and Folia:
 * {@code Warden.track(player, "crate_opened", Map.of("crate", "vote"))}. The same API is in the
 * services manager as {@link WardenApi}. Add {@code softdepend: [Warden]} to your plugin.yml.
 */
public final class Warden {
    private static volatile WardenApi api;

    private Warden() {}

    static void set(WardenApi value) {
        api = value;
    }

    /** The API, or null while Warden is not enabled (or not configured). */
    public static WardenApi api() {
        return api;
    }

    /**
     * Queues a custom event for {@code player}; see {@link WardenApi#track}. Non-blocking, safe
     * from any thread. Returns false when Warden is not running or its queue is full.
     *
     * @throws IllegalArgumentException when the name or properties break the contract's rules
     */
    public static boolean track(Player player, String name, Map<String, ?> properties) {
        WardenApi current = api;
        if (current == null) {
            dev.warden.plugin.core.EventNames.check(name);
            return false;
        }
        return current.track(player.getUniqueId(), name, properties);
    }

    public static boolean track(Player player, String name) {
        return track(player, name, null);
    }
}
