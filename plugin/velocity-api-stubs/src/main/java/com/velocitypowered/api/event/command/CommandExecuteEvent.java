package com.velocitypowered.api.event.command;

import com.velocitypowered.api.command.CommandSource;
import com.velocitypowered.api.event.ResultedEvent;
import java.util.Objects;
import java.util.Optional;

public final class CommandExecuteEvent implements ResultedEvent<CommandExecuteEvent.CommandResult> {
    private final CommandSource commandSource;
    private final String command;
    private CommandResult result;

    public CommandExecuteEvent(CommandSource commandSource, String command) {
        this.commandSource = Objects.requireNonNull(commandSource, "commandSource");
        this.command = Objects.requireNonNull(command, "command");
        this.result = CommandResult.allowed();
    }

    public CommandSource getCommandSource() {
        return commandSource;
    }

    public String getCommand() {
        return command;
    }

    @Override
    public CommandResult getResult() {
        return result;
    }

    @Override
    public void setResult(final CommandResult result) {
        this.result = Objects.requireNonNull(result, "result");
    }

    public static final class CommandResult implements ResultedEvent.Result {
        private static final CommandResult ALLOWED = new CommandResult(true, false, null);
        private static final CommandResult DENIED = new CommandResult(false, false, null);
        private static final CommandResult FORWARD_TO_SERVER = new CommandResult(false, true, null);

        private final String command;
        private final boolean status;
        private final boolean forward;

        private CommandResult(final boolean status, final boolean forward, final String command) {
            this.status = status;
            this.forward = forward;
            this.command = command;
        }

        public Optional<String> getCommand() {
            return Optional.ofNullable(command);
        }

        public boolean isForwardToServer() {
            return forward;
        }

        @Override
        public boolean isAllowed() {
            return status;
        }

        public static CommandResult allowed() {
            return ALLOWED;
        }

        public static CommandResult denied() {
            return DENIED;
        }

        public static CommandResult forwardToServer() {
            return FORWARD_TO_SERVER;
        }

        public static CommandResult command(final String newCommand) {
            return new CommandResult(true, false, Objects.requireNonNull(newCommand, "newCommand"));
        }
    }
}
