package dev.warden.plugin.paper.listener;

import dev.warden.plugin.core.Capture;
import org.bukkit.entity.Player;
import org.bukkit.event.EventHandler;
import org.bukkit.event.EventPriority;
import org.bukkit.event.Listener;
import org.bukkit.event.player.AsyncPlayerChatEvent;

/** Chat on Spigot, which has no AsyncChatEvent. Registered only where Paper's event is absent. */
@SuppressWarnings("deprecation") // AsyncPlayerChatEvent is deprecated on Paper only
public final class SpigotChatListener implements Listener {
    private final Capture capture;

    public SpigotChatListener(Capture capture) {
        this.capture = capture;
    }

    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onChat(AsyncPlayerChatEvent event) {
        Player player = event.getPlayer();
        capture.chat(player.getUniqueId(), player.getName(), event.getMessage());
    }
}
