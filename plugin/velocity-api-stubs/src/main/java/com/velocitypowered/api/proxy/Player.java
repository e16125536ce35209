package com.velocitypowered.api.proxy;

import com.velocitypowered.api.command.CommandSource;
import com.velocitypowered.api.proxy.messages.ChannelMessageSink;
import com.velocitypowered.api.proxy.messages.ChannelMessageSource;
import java.util.UUID;

/** In the real API Player also extends adventure's Identified, HoverEventSource, Keyed and KeyIdentifiable. */
public interface Player extends CommandSource, InboundConnection, ChannelMessageSource, ChannelMessageSink {
    String getUsername();

    UUID getUniqueId();
}
