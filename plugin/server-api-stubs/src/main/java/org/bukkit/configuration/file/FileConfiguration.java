package org.bukkit.configuration.file;

import org.bukkit.configuration.ConfigurationSection;

/** In paper-api: FileConfiguration extends MemoryConfiguration (a ConfigurationSection). */
public abstract class FileConfiguration implements ConfigurationSection {}
