package dev.warden.plugin.paper.scheduler;

import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.bukkit.entity.Player;
import org.bukkit.plugin.Plugin;

/** Folia: no main thread; the global region scheduler runs server-wide tasks. */
final class FoliaScheduler implements PlatformScheduler {
    private final Plugin plugin;

    FoliaScheduler(Plugin plugin) {
        this.plugin = plugin;
    }

    @Override
    public void repeatOnServerThread(Runnable task, long periodTicks) {
        plugin.getServer().getGlobalRegionScheduler()
                .runAtFixedRate(plugin, scheduled -> task.run(), periodTicks, periodTicks);
    }

    @Override
    public CompletableFuture<Boolean> withPlayer(UUID id, Consumer<Player> task) {
        CompletableFuture<Boolean> done = new CompletableFuture<>();
        // Folia's player lookup is safe from any thread; the task runs on the player's region.
        Player player = plugin.getServer().getPlayer(id);
        if (player == null) {
            done.complete(false);
            return done;
        }
        Object scheduled = player.getScheduler().run(plugin, t -> {
            try {
                task.accept(player);
                done.complete(true);
            } catch (RuntimeException e) {
                done.completeExceptionally(e);
            }
        }, () -> done.complete(false));
        if (scheduled == null) {
            done.complete(false);
        }
        return done;
    }

    @Override
    public <T> CompletableFuture<T> onServerThread(java.util.function.Supplier<T> task) {
        CompletableFuture<T> done = new CompletableFuture<>();
        plugin.getServer().getGlobalRegionScheduler().run(plugin, scheduled -> {
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
        plugin.getServer().getGlobalRegionScheduler().cancelTasks(plugin);
    }
}
