package io.papermc.paper.threadedregions.scheduler;

import java.util.function.Consumer;
import org.bukkit.plugin.Plugin;

/** Folia's per-entity scheduler (present on Paper 1.20+ too): runs on the region owning the entity. */
public interface EntityScheduler {
    /** Null when the entity has been removed; {@code retired} runs if it is removed before the task. */
    ScheduledTask run(Plugin plugin, Consumer<ScheduledTask> task, Runnable retired);
}
