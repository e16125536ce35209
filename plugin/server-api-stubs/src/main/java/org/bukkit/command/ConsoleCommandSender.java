package org.bukkit.command;

/** The server console as a command sender (paper-api extends it from Conversable too). */
public interface ConsoleCommandSender extends CommandSender {}
