package org.bukkit.entity;

import org.bukkit.command.CommandSender;

/** In paper-api, Entity extends CommandSender (and more); Player reaches it through HumanEntity and LivingEntity. */
public interface Entity extends CommandSender {
    /** Paper 1.20+ (Folia's per-entity scheduler, present on Paper too). */
    io.papermc.paper.threadedregions.scheduler.EntityScheduler getScheduler();
}
