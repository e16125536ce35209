package dev.warden.plugin.paper.enforce;

import dev.warden.plugin.core.enforce.ActionFeed;
import dev.warden.plugin.core.enforce.Sanctions;
import io.papermc.paper.event.player.AsyncChatEvent;
import java.time.Clock;
import org.bukkit.event.EventHandler;
import org.bukkit.event.EventPriority;
import org.bukkit.event.Listener;

/** Cancels a muted player's chat on Paper, Purpur and Folia (and tells them why). */
public final class PaperMuteListener implements Listener {
    private final Sanctions sanctions;
    private final Clock clock;

    public PaperMuteListener(Sanctions sanctions, Clock clock) {
        this.sanctions = sanctions;
        this.clock = clock;
    }

    @EventHandler(priority = EventPriority.LOWEST, ignoreCancelled = true)
    public void onChat(AsyncChatEvent event) {
        Sanctions.Entry mute = sanctions.mute(event.getPlayer().getUniqueId(), clock.instant());
        if (mute != null) {
            event.setCancelled(true);
            event.getPlayer().sendMessage(ActionFeed.muteMessage(mute));
        }
    }
}
