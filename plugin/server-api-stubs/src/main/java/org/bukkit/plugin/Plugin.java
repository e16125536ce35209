package org.bukkit.plugin;

import java.io.File;
import java.util.logging.Logger;
import org.bukkit.Server;

public interface Plugin {
    File getDataFolder();

    Server getServer();

    Logger getLogger();

    String getName();

    @Deprecated
    PluginDescriptionFile getDescription();
}
