package dev.warden.plugin.paper.enforce;

import dev.warden.plugin.core.enforce.ActionFeed;
import dev.warden.plugin.core.enforce.Sanctions;
import java.time.Clock;
import org.bukkit.event.EventHandler;
import org.bukkit.event.EventPriority;
import org.bukkit.event.Listener;
import org.bukkit.event.player.AsyncPlayerChatEvent;

/** Cancels a muted player's chat on Spigot (and tells them why). */
public final class SpigotMuteListener implements Listener {
    private final Sanctions sanctions;
    private final Clock clock;

    public SpigotMuteListener(Sanctions sanctions, Clock clock) {
        this.sanctions = sanctions;
        this.clock = clock;
    }

    @EventHandler(priority = EventPriority.LOWEST, ignoreCancelled = true)
    public void onChat(AsyncPlayerChatEvent event) {
        Sanctions.Entry mute = sanctions.mute(event.getPlayer().getUniqueId(), clock.instant());
        if (mute != null) {
            event.setCancelled(true);
            event.getPlayer().sendMessage(ActionFeed.muteMessage(mute));
        }
    }
}
