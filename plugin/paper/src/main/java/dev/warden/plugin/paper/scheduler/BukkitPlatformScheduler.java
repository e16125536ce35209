package dev.warden.plugin.paper.scheduler;

import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.bukkit.entity.Player;
import org.bukkit.plugin.Plugin;

/** Spigot, Paper and Purpur: the main thread through BukkitScheduler. */
final class BukkitPlatformScheduler implements PlatformScheduler {
    private final Plugin plugin;

    BukkitPlatformScheduler(Plugin plugin) {
        this.plugin = plugin;
    }

    @Override
    public void repeatOnServerThread(Runnable task, long periodTicks) {
        plugin.getServer().getScheduler().runTaskTimer(plugin, task, periodTicks, periodTicks);
    }

    @Override
    public CompletableFuture<Boolean> withPlayer(UUID id, Consumer<Player> task) {
        CompletableFuture<Boolean> done = new CompletableFuture<>();
        // The lookup too runs on the main thread: the player list is the main thread's.
        plugin.getServer().getScheduler().runTask(plugin, () -> {
            try {
                Player player = plugin.getServer().getPlayer(id);
                if (player != null) {
                    task.accept(player);
                }
                done.complete(player != null);
            } catch (RuntimeException e) {
                done.completeExceptionally(e);
            }
        });
        return done;
    }

    @Override
    public <T> CompletableFuture<T> onServerThread(java.util.function.Supplier<T> task) {
        CompletableFuture<T> done = new CompletableFuture<>();
        plugin.getServer().getScheduler().runTask(plugin, () -> {
            try {
                done.complete(task.get());
            } catch (RuntimeException e) {
                done.completeExceptionally(e);
            }
        });
        return done;
    }

    @Override
    public void cancelAll() {
        plugin.getServer().getScheduler().cancelTasks(plugin);
    }
}
