package dev.warden.plugin.paper.listener;

import dev.warden.plugin.core.Capture;
import io.papermc.paper.event.player.AsyncChatEvent;
import net.kyori.adventure.text.serializer.plain.PlainTextComponentSerializer;
import org.bukkit.entity.Player;
import org.bukkit.event.EventHandler;
import org.bukkit.event.EventPriority;
import org.bukkit.event.Listener;

/** Chat on Paper, Purpur and Folia (AsyncChatEvent, fired off the server thread). */
public final class PaperChatListener implements Listener {
    private final Capture capture;

    public PaperChatListener(Capture capture) {
        this.capture = capture;
    }

    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onChat(AsyncChatEvent event) {
        Player player = event.getPlayer();
        String text = PlainTextComponentSerializer.plainText().serialize(event.message());
        capture.chat(player.getUniqueId(), player.getName(), text);
    }
}
