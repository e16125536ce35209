package com.velocitypowered.api.proxy;

import com.velocitypowered.api.network.ProtocolVersion;
import java.net.InetSocketAddress;

public interface InboundConnection {
    InetSocketAddress getRemoteAddress();

    ProtocolVersion getProtocolVersion();
}
