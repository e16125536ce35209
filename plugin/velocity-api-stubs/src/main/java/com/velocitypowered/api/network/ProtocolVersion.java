package com.velocitypowered.api.network;

/** The real enum has a constant per supported version; the plugin only reads getProtocol(). */
public enum ProtocolVersion {
    MINECRAFT_1_21(767);

    private final int protocol;

    ProtocolVersion(int protocol) {
        this.protocol = protocol;
    }

    public int getProtocol() {
        return protocol;
    }
}
