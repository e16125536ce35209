package com.velocitypowered.api.event.proxy;

public final class ProxyShutdownEvent {}
