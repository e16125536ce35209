package org.bukkit.permissions;

public interface Permissible {
    boolean hasPermission(String name);
}
