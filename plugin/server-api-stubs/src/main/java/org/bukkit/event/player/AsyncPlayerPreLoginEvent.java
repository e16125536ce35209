package org.bukkit.event.player;

import java.net.InetAddress;
import java.util.UUID;
import org.bukkit.event.Event;
import org.bukkit.event.HandlerList;

/**
 * Fired on a login thread before the player joins (no Player object yet). In paper-api it extends
 * Event directly, not PlayerEvent.
 */
public class AsyncPlayerPreLoginEvent extends Event {
    private static final HandlerList HANDLER_LIST = new HandlerList();
    private final String name;
    private final InetAddress ipAddress;
    private final UUID uniqueId;
    private Result result = Result.ALLOWED;
    private String message = "";

    /** Test convenience (the real constructors are internal). */
    public AsyncPlayerPreLoginEvent(String name, InetAddress ipAddress, UUID uniqueId, boolean transferred) {
        super(true);
        this.name = name;
        this.ipAddress = ipAddress;
        this.uniqueId = uniqueId;
    }

    public Result getLoginResult() {
        return result;
    }

    /** Deprecated on Paper (which prefers the Component forms); Spigot's only form. */
    @Deprecated
    public String getKickMessage() {
        return message;
    }

    /** Deprecated on Paper (which prefers the Component forms); Spigot's only form. */
    @Deprecated
    public void disallow(Result result, String message) {
        this.result = result;
        this.message = message;
    }

    public String getName() {
        return name;
    }

    public InetAddress getAddress() {
        return ipAddress;
    }

    public UUID getUniqueId() {
        return uniqueId;
    }

    @Override
    public HandlerList getHandlers() {
        return HANDLER_LIST;
    }

    public static HandlerList getHandlerList() {
        return HANDLER_LIST;
    }

    public enum Result {
        ALLOWED,
        KICK_FULL,
        KICK_BANNED,
        KICK_WHITELIST,
        KICK_OTHER
    }
}
