package com.velocitypowered.api.proxy.server;

import java.net.InetSocketAddress;
import java.util.Objects;

public final class ServerInfo implements Comparable<ServerInfo> {
    private final String name;
    private final InetSocketAddress address;

    public ServerInfo(String name, InetSocketAddress address) {
        this.name = Objects.requireNonNull(name, "name");
        this.address = Objects.requireNonNull(address, "address");
    }

    public final String getName() {
        return name;
    }

    public final InetSocketAddress getAddress() {
        return address;
    }

    @Override
    public int compareTo(ServerInfo o) {
        return this.name.compareTo(o.getName());
    }
}
