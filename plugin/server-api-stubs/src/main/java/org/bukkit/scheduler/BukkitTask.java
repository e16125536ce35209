package org.bukkit.scheduler;

public interface BukkitTask {
    void cancel();
}
