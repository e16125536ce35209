package com.velocitypowered.api.proxy.messages;

public interface ChannelMessageSource {}
