package com.velocitypowered.api.proxy.config;

public interface ProxyConfig {
    int getShowMaxPlayers();
}
