package org.bukkit.entity;

import java.net.InetSocketAddress;
import org.bukkit.OfflinePlayer;

/**
 * In paper-api, Player extends HumanEntity (and so Entity and CommandSender), OfflinePlayer,
 * PluginMessageRecipient and NetworkClient.
 */
public interface Player extends Entity, OfflinePlayer, org.bukkit.plugin.messaging.PluginMessageRecipient,
        com.destroystokyo.paper.network.NetworkClient {
    @Override
    String getName();

    @Override
    InetSocketAddress getAddress();

    /** The server's estimate of the player's round trip, in milliseconds. */
    int getPing();

    /** Deprecated on Paper (which prefers kick(Component)); Spigot's only form. */
    @Deprecated
    void kickPlayer(String message);
}
