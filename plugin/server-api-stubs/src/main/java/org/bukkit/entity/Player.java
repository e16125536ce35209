package org.bukkit.entity;

import java.net.InetSocketAddress;
import org.bukkit.OfflinePlayer;
import org.bukkit.command.CommandSender;

/**
 * In paper-api, Player extends HumanEntity (and so CommandSender), OfflinePlayer,
 * PluginMessageRecipient and NetworkClient.
 */
public interface Player extends CommandSender, OfflinePlayer, org.bukkit.plugin.messaging.PluginMessageRecipient,
        com.destroystokyo.paper.network.NetworkClient {
    @Override
    String getName();

    @Override
    InetSocketAddress getAddress();

    /** The server's estimate of the player's round trip, in milliseconds. */
    int getPing();
}
