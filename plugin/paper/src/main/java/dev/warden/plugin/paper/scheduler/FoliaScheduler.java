package dev.warden.plugin.paper.scheduler;

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
    public void cancelAll() {
        plugin.getServer().getGlobalRegionScheduler().cancelTasks(plugin);
    }
}
