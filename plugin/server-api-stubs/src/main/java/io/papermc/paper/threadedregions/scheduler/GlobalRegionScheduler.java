package io.papermc.paper.threadedregions.scheduler;

import java.util.function.Consumer;
import org.bukkit.plugin.Plugin;

/** Folia's global region scheduler (present on Paper 1.20+ too). */
public interface GlobalRegionScheduler {
    ScheduledTask run(Plugin plugin, Consumer<ScheduledTask> task);

    ScheduledTask runAtFixedRate(Plugin plugin, Consumer<ScheduledTask> task, long initialDelayTicks, long periodTicks);

    void cancelTasks(Plugin plugin);
}
