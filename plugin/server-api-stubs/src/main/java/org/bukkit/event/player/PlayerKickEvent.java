package org.bukkit.event.player;

import org.bukkit.entity.Player;
import org.bukkit.event.Cancellable;
import org.bukkit.event.HandlerList;

public class PlayerKickEvent extends PlayerEvent implements Cancellable {
    private static final HandlerList HANDLERS = new HandlerList();
    private final String reason;
    private final Cause cause;
    private boolean cancelled;

    public PlayerKickEvent(Player playerKicked, String kickReason, String leaveMessage, Cause cause) {
        super(playerKicked);
        this.reason = kickReason;
        this.cause = cause;
    }

    /** Deprecated on Paper (reason() is a Component there), present on Spigot and Paper. */
    public String getReason() {
        return reason;
    }

    /** Paper only. */
    public Cause getCause() {
        return cause;
    }

    @Override
    public boolean isCancelled() {
        return cancelled;
    }

    @Override
    public void setCancelled(boolean cancel) {
        cancelled = cancel;
    }

    @Override
    public HandlerList getHandlers() {
        return HANDLERS;
    }

    public static HandlerList getHandlerList() {
        return HANDLERS;
    }

    /** Paper only; the constants the plugin reads, plus the catch-all. */
    public enum Cause {
        PLUGIN,
        WHITELIST,
        BANNED,
        IP_BANNED,
        KICK_COMMAND,
        KICKED,
        UNKNOWN
    }
}
