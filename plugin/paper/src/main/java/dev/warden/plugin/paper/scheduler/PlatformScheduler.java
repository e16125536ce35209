package dev.warden.plugin.paper.scheduler;

import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.bukkit.entity.Player;
import org.bukkit.plugin.Plugin;

/**
 * The one thing the plugin schedules on the server: a repeating task on the server's own thread
 * (Bukkit's main thread; Folia's global region thread). Network and disk work never goes here:
 * the core has its own thread.
 */
public interface PlatformScheduler {
    /** Runs {@code task} every {@code periodTicks} ticks on the server thread. */
    void repeatOnServerThread(Runnable task, long periodTicks);

    /**
     * Runs {@code task} with the online player of this id on the thread that owns them (Bukkit's
     * main thread; on Folia the player's region). Completes with true once it ran, false when the
     * player is not online (or left before it could run). Callable from any thread.
     */
    CompletableFuture<Boolean> withPlayer(UUID player, Consumer<Player> task);

    /**
     * Runs {@code task} once on the server's thread (Bukkit's main thread; Folia's global region
     * thread), where console commands are dispatched. Completes with its result, or exceptionally
     * with what it threw. Callable from any thread.
     */
    <T> CompletableFuture<T> onServerThread(java.util.function.Supplier<T> task);

    /** Cancels everything this plugin scheduled. */
    void cancelAll();

    /** Folia when its region scheduler classes are present, else Bukkit's scheduler. */
    static PlatformScheduler forServer(Plugin plugin) {
        return isFolia() ? new FoliaScheduler(plugin) : new BukkitPlatformScheduler(plugin);
    }

    static boolean isFolia() {
        try {
            Class.forName("io.papermc.paper.threadedregions.RegionizedServer");
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }
}
