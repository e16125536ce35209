package com.velocitypowered.api.command;

/** In the real API also permits BrigadierCommand. */
public sealed interface Command permits InvocableCommand {}
