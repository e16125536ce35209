package com.velocitypowered.api.command;

public interface CommandInvocation<T> {
    CommandSource source();

    T arguments();
}
