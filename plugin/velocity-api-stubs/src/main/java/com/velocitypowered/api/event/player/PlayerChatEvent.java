package com.velocitypowered.api.event.player;

import com.velocitypowered.api.event.ResultedEvent;
import com.velocitypowered.api.proxy.Player;
import java.util.Objects;
import java.util.Optional;

public final class PlayerChatEvent implements ResultedEvent<PlayerChatEvent.ChatResult> {
    private final Player player;
    private final String message;
    private ChatResult result;

    public PlayerChatEvent(Player player, String message) {
        this.player = Objects.requireNonNull(player, "player");
        this.message = Objects.requireNonNull(message, "message");
        this.result = ChatResult.allowed();
    }

    public Player getPlayer() {
        return player;
    }

    public String getMessage() {
        return message;
    }

    @Override
    public ChatResult getResult() {
        return result;
    }

    @Deprecated
    @Override
    public void setResult(ChatResult result) {
        this.result = Objects.requireNonNull(result, "result");
    }

    public static final class ChatResult implements ResultedEvent.Result {
        private static final ChatResult ALLOWED = new ChatResult(true, null);
        private static final ChatResult DENIED = new ChatResult(false, null);

        private final String message;
        private final boolean status;

        private ChatResult(boolean status, String message) {
            this.status = status;
            this.message = message;
        }

        public Optional<String> getMessage() {
            return Optional.ofNullable(message);
        }

        @Override
        public boolean isAllowed() {
            return status;
        }

        public static ChatResult allowed() {
            return ALLOWED;
        }

        public static ChatResult denied() {
            return DENIED;
        }

        public static ChatResult message(String message) {
            return new ChatResult(true, Objects.requireNonNull(message, "message"));
        }
    }
}
