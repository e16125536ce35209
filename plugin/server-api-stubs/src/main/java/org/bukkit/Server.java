package org.bukkit;

import java.util.Collection;
import java.util.UUID;
import org.bukkit.entity.Player;
import org.bukkit.plugin.PluginManager;
import org.bukkit.plugin.ServicesManager;
import org.bukkit.scheduler.BukkitScheduler;

public interface Server {
    String getName();

    String getVersion();

    String getBukkitVersion();

    Collection<? extends Player> getOnlinePlayers();

    int getMaxPlayers();

    /** The online player with this UUID, or null. */
    Player getPlayer(UUID id);

    PluginManager getPluginManager();

    BukkitScheduler getScheduler();

    ServicesManager getServicesManager();

    org.bukkit.plugin.messaging.Messenger getMessenger();

    /** The console, as the sender of commands the plugin dispatches. */
    org.bukkit.command.ConsoleCommandSender getConsoleSender();

    /**
     * Runs a command as {@code sender}; false when no such command exists. Throws the unchecked
     * {@code CommandException} when the command's executor fails (not declared here: the plugin
     * catches RuntimeException).
     */
    boolean dispatchCommand(org.bukkit.command.CommandSender sender, String commandLine);

    /** Paper only (not in Spigot's API). */
    double[] getTPS();

    /** Paper 1.20+ (Folia's schedulers, present on Paper too). */
    io.papermc.paper.threadedregions.scheduler.GlobalRegionScheduler getGlobalRegionScheduler();
}
