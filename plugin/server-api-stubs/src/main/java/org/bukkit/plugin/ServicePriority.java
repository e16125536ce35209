package org.bukkit.plugin;

public enum ServicePriority {
    Lowest,
    Low,
    Normal,
    High,
    Highest
}
