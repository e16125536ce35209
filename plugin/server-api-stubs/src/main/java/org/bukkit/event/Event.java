package org.bukkit.event;

public abstract class Event {
    private final boolean async;

    public Event() {
        this(false);
    }

    public Event(boolean isAsync) {
        this.async = isAsync;
    }

    public final boolean isAsynchronous() {
        return async;
    }

    public abstract HandlerList getHandlers();
}
