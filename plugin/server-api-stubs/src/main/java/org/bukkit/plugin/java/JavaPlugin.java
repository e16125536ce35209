package org.bukkit.plugin.java;

import java.io.File;
import java.util.logging.Logger;
import org.bukkit.Server;
import org.bukkit.command.PluginCommand;
import org.bukkit.configuration.file.FileConfiguration;
import org.bukkit.plugin.Plugin;
import org.bukkit.plugin.PluginDescriptionFile;

/** Compile-only: the server's class answers at run time. */
public abstract class JavaPlugin implements Plugin {
    protected JavaPlugin() {}

    @Override
    public final File getDataFolder() {
        throw new UnsupportedOperationException("stub");
    }

    @Override
    public final Server getServer() {
        throw new UnsupportedOperationException("stub");
    }

    @Override
    public Logger getLogger() {
        throw new UnsupportedOperationException("stub");
    }

    @Override
    public final String getName() {
        throw new UnsupportedOperationException("stub");
    }

    @Override
    @Deprecated
    public final PluginDescriptionFile getDescription() {
        throw new UnsupportedOperationException("stub");
    }

    public FileConfiguration getConfig() {
        throw new UnsupportedOperationException("stub");
    }

    public void reloadConfig() {
        throw new UnsupportedOperationException("stub");
    }

    public void saveDefaultConfig() {
        throw new UnsupportedOperationException("stub");
    }

    public PluginCommand getCommand(String name) {
        throw new UnsupportedOperationException("stub");
    }

    public void onEnable() {}

    public void onDisable() {}
}
