package org.bukkit.command;

import org.bukkit.permissions.Permissible;

public interface CommandSender extends Permissible {
    void sendMessage(String message);

    String getName();
}
