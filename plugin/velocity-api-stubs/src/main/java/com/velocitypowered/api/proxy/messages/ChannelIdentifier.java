package com.velocitypowered.api.proxy.messages;

public interface ChannelIdentifier {
    String getId();
}
