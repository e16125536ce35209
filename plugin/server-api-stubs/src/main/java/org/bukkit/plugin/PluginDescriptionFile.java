package org.bukkit.plugin;

public final class PluginDescriptionFile {
    private final String name;
    private final String version;

    public PluginDescriptionFile(String pluginName, String pluginVersion, String mainClass) {
        this.name = pluginName;
        this.version = pluginVersion;
    }

    public String getName() {
        return name;
    }

    public String getVersion() {
        return version;
    }
}
