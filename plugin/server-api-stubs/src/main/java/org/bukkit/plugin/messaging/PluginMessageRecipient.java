package org.bukkit.plugin.messaging;

import org.bukkit.plugin.Plugin;

public interface PluginMessageRecipient {
    public void sendPluginMessage(Plugin source, String channel, byte[] message);
}
