package com.velocitypowered.api.command;

public non-sealed interface SimpleCommand extends InvocableCommand<SimpleCommand.Invocation> {
    interface Invocation extends CommandInvocation<String[]> {
        String alias();
    }
}
