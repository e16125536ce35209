package com.velocitypowered.api.command;

public interface CommandMeta {
    interface Builder {
        Builder aliases(String... aliases);

        Builder plugin(Object plugin);

        CommandMeta build();
    }
}
