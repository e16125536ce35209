package org.bukkit.configuration;

import java.util.List;

public interface ConfigurationSection {
    String getString(String path, String def);

    int getInt(String path, int def);

    boolean getBoolean(String path, boolean def);

    List<String> getStringList(String path);

    boolean contains(String path);
}
