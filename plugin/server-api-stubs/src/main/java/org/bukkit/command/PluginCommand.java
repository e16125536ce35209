package org.bukkit.command;

public final class PluginCommand extends Command {
    private PluginCommand(String name) {
        super(name);
    }

    public void setExecutor(CommandExecutor executor) {
        throw new UnsupportedOperationException("stub");
    }

    public void setTabCompleter(TabCompleter completer) {
        throw new UnsupportedOperationException("stub");
    }
}
