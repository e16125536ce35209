package com.velocitypowered.api.command;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/** In the real API also permits RawCommand. */
public sealed interface InvocableCommand<I extends CommandInvocation<?>> extends Command permits SimpleCommand {
    void execute(I invocation);

    default List<String> suggest(final I invocation) {
        return List.of();
    }

    default CompletableFuture<List<String>> suggestAsync(final I invocation) {
        return CompletableFuture.completedFuture(suggest(invocation));
    }

    default boolean hasPermission(final I invocation) {
        return true;
    }
}
