package com.velocitypowered.api.event;

public interface EventManager {
    void register(Object plugin, Object listener);
}
