package dev.warden.plugin.paper.scheduler;

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
    public void cancelAll() {
        plugin.getServer().getScheduler().cancelTasks(plugin);
    }
}
