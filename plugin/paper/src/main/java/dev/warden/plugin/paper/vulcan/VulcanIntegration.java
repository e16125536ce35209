package dev.warden.plugin.paper.vulcan;

import dev.warden.plugin.core.Capture;
import dev.warden.plugin.core.integration.FlagCap;
import dev.warden.plugin.core.integration.Integration;
import java.util.UUID;
import java.util.function.Consumer;
import me.frep.vulcan.api.check.Check;
import me.frep.vulcan.api.event.VulcanFlagEvent;
import org.bukkit.entity.Player;
import org.bukkit.event.EventHandler;
import org.bukkit.event.EventPriority;
import org.bukkit.event.Listener;
import org.bukkit.plugin.Plugin;

/**
 * Vulcan's flags, through its API's {@code VulcanFlagEvent} (a Bukkit event): every flag Vulcan
 * keeps becomes the contract's anti-cheat flag ({@code source_plugin} "vulcan"), within the
 * per-check rate cap. Loaded only when Vulcan is enabled; this package is the only one that names
 * Vulcan's API, so the plugin runs without it.
 */
public final class VulcanIntegration implements Listener {
    static final String SOURCE = "vulcan";

    private final Consumer<VulcanFlagEvent> handler;

    VulcanIntegration(Capture capture, FlagCap cap, Integration integration) {
        this.handler = integration.guard("a flag", e -> flag(capture, cap, integration, e));
    }

    public static void enable(Plugin plugin, Capture capture, FlagCap cap, Integration integration) {
        plugin.getServer().getPluginManager().registerEvents(new VulcanIntegration(capture, cap, integration), plugin);
    }

    /**
     * MONITOR, skipping cancelled flags: a flag another plugin cancelled is one Vulcan does not
     * count. The event is asynchronous (built with {@code super(true)}): Vulcan fires it from its
     * packet-processing threads, never the server thread, at up to many flags a second per player.
     * So: a cap lookup first, no lock, no I/O; Player#getPing reads a field the server keeps.
     */
    @EventHandler(priority = EventPriority.MONITOR, ignoreCancelled = true)
    public void onFlag(VulcanFlagEvent event) {
        handler.accept(event);
    }

    static void flag(Capture capture, FlagCap cap, Integration integration, VulcanFlagEvent event) {
        Player player = event.getPlayer();
        Check check = event.getCheck();
        UUID id = player.getUniqueId();
        String name = check.getName();
        char type = check.getType();
        if (!cap.admit(id, name + type)) {
            integration.dropped(cap.reason());
            return;
        }
        String typeName = Character.isLetterOrDigit(type) ? String.valueOf(Character.toUpperCase(type)) : null;
        capture.anticheatFlag(id, player.getName(), capitalized(name), typeName, check.getVl(), event.getInfo(),
                SOURCE, check.isExperimental(), player.getPing());
        integration.sent();
    }

    /** Vulcan names its checks in lower case ("speed"); the dashboard shows "Speed". */
    static String capitalized(String name) {
        if (name == null || name.isEmpty()) {
            return name;
        }
        return Character.toUpperCase(name.charAt(0)) + name.substring(1);
    }
}
