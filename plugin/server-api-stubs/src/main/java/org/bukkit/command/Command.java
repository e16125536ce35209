package org.bukkit.command;

public abstract class Command {
    protected Command(String name) {}
}
