package com.velocitypowered.api.command;

public interface CommandManager {
    CommandMeta.Builder metaBuilder(String alias);

    void register(CommandMeta meta, Command command);

    void unregister(CommandMeta meta);

    boolean hasCommand(String alias, CommandSource source);
}
