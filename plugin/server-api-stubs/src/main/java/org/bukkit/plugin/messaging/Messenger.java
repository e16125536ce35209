package org.bukkit.plugin.messaging;

import org.bukkit.plugin.Plugin;

public interface Messenger {
    public void registerOutgoingPluginChannel(Plugin plugin, String channel);
}
