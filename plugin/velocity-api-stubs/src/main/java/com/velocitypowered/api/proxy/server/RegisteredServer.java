package com.velocitypowered.api.proxy.server;

/** In the real API also a ChannelMessageSink and an adventure Audience. */
public interface RegisteredServer {
    ServerInfo getServerInfo();
}
