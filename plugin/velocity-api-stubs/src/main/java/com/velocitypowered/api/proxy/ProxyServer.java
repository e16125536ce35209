package com.velocitypowered.api.proxy;

import com.velocitypowered.api.command.CommandManager;
import com.velocitypowered.api.event.EventManager;
import com.velocitypowered.api.proxy.config.ProxyConfig;
import com.velocitypowered.api.proxy.messages.ChannelRegistrar;
import com.velocitypowered.api.scheduler.Scheduler;
import com.velocitypowered.api.util.ProxyVersion;
import net.kyori.adventure.audience.Audience;

/** In the real API ProxyServer is also an adventure Audience (declared here for that reason). */
public interface ProxyServer extends Audience {
    int getPlayerCount();

    EventManager getEventManager();

    CommandManager getCommandManager();

    Scheduler getScheduler();

    ChannelRegistrar getChannelRegistrar();

    ProxyConfig getConfiguration();

    ProxyVersion getVersion();
}
