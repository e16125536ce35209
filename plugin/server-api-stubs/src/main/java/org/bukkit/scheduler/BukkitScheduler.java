package org.bukkit.scheduler;

import org.bukkit.plugin.Plugin;

/** Not available on Folia (its methods throw there): Folia has its own schedulers. */
public interface BukkitScheduler {
    BukkitTask runTask(Plugin plugin, Runnable task);

    BukkitTask runTaskTimer(Plugin plugin, Runnable task, long delay, long period);

    BukkitTask runTaskAsynchronously(Plugin plugin, Runnable task);

    void cancelTasks(Plugin plugin);
}
