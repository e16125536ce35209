package com.velocitypowered.api.proxy;

import com.velocitypowered.api.proxy.messages.ChannelMessageSink;
import com.velocitypowered.api.proxy.messages.ChannelMessageSource;
import com.velocitypowered.api.proxy.server.ServerInfo;

public interface ServerConnection extends ChannelMessageSource, ChannelMessageSink {
    ServerInfo getServerInfo();
}
