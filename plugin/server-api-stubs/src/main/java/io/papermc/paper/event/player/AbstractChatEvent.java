package io.papermc.paper.event.player;

import net.kyori.adventure.text.Component;
import org.bukkit.entity.Player;
import org.bukkit.event.Cancellable;
import org.bukkit.event.player.PlayerEvent;

/** Paper only. */
public abstract class AbstractChatEvent extends PlayerEvent implements Cancellable {
    private final Component message;
    private boolean cancelled;

    AbstractChatEvent(boolean async, Player player, Component message) {
        super(player, async);
        this.message = message;
    }

    public final Component message() {
        return message;
    }

    @Override
    public final boolean isCancelled() {
        return cancelled;
    }

    @Override
    public final void setCancelled(boolean cancel) {
        cancelled = cancel;
    }
}
