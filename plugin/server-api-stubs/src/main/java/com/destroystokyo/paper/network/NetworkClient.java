package com.destroystokyo.paper.network;

import java.net.InetSocketAddress;

/** Paper only. */
public interface NetworkClient {
    InetSocketAddress getAddress();

    int getProtocolVersion();
}
