package dev.warden.plugin.paper.punishments.advancedban;

import dev.warden.plugin.core.Capture;
import dev.warden.plugin.core.integration.Integration;
import dev.warden.plugin.paper.punishments.PunishmentFacts;
import java.time.Instant;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.function.Function;
import me.leoko.advancedban.bukkit.event.PunishmentEvent;
import me.leoko.advancedban.bukkit.event.RevokePunishmentEvent;
import me.leoko.advancedban.utils.Punishment;
import me.leoko.advancedban.utils.PunishmentType;
import org.bukkit.entity.Player;
import org.bukkit.event.EventHandler;
import org.bukkit.event.EventPriority;
import org.bukkit.event.Listener;
import org.bukkit.plugin.Plugin;

/**
 * Punishments from AdvancedBan, through its Bukkit events: {@code PunishmentEvent} is an issue,
 * {@code RevokePunishmentEvent} a revoke, named by AdvancedBan's punishment id. AdvancedBan's
 * revoke event does not say who revoked nor why, and kicks have no id. Loaded only when
 * AdvancedBan is enabled; the only classes that name its API are in this package.
 */
public final class AdvancedBanIntegration implements Listener {
    public static final String SOURCE = "advancedban";

    private final Consumer<PunishmentEvent> punished;
    private final Consumer<RevokePunishmentEvent> revoked;

    /**
     * {@code online}: the UUID of an online player by name, or null, for what AdvancedBan names by
     * name alone (the staff member; the player of an IP ban, which it stores under the address).
     */
    AdvancedBanIntegration(Capture capture, Integration integration, Function<String, UUID> online) {
        punished = integration.guard("a punishment issued",
                e -> issued(capture, integration, e.getPunishment(), online));
        revoked = integration.guard("a punishment revoked",
                e -> revoked(capture, integration, e.getPunishment(), online));
    }

    public static void enable(Plugin plugin, Capture capture, Integration integration) {
        plugin.getServer().getPluginManager().registerEvents(
                new AdvancedBanIntegration(capture, integration, name -> online(plugin, name)), plugin);
    }

    /** AdvancedBan fires its events on the server thread, where the player list may be read. */
    private static UUID online(Plugin plugin, String name) {
        for (Player p : plugin.getServer().getOnlinePlayers()) {
            if (p.getName().equalsIgnoreCase(name)) {
                return p.getUniqueId();
            }
        }
        return null;
    }

    @EventHandler(priority = EventPriority.MONITOR)
    public void onPunishment(PunishmentEvent event) {
        punished.accept(event);
    }

    @EventHandler(priority = EventPriority.MONITOR)
    public void onRevoke(RevokePunishmentEvent event) {
        revoked.accept(event);
    }

    /** The contract's type; null for a note (AdvancedBan's notes are not punishments). */
    static String type(PunishmentType type) {
        return switch (type) {
            case BAN, TEMP_BAN, IP_BAN, TEMP_IP_BAN -> "ban";
            case MUTE, TEMP_MUTE -> "mute";
            case WARNING, TEMP_WARNING -> "warning";
            case KICK -> "kick";
            case NOTE -> null;
        };
    }

    /** AdvancedBan's player: its stored UUID, else (a name or an address) the online player of that name. */
    static UUID player(Punishment p, Function<String, UUID> online) {
        UUID stored = PunishmentFacts.uuid(p.getUuid());
        return stored != null || p.getName() == null ? stored : online.apply(p.getName());
    }

    /** AdvancedBan's id; it gives kicks none (-1). */
    static String externalId(Punishment p) {
        return p.getId() < 0 ? null : Integer.toString(p.getId());
    }

    static void issued(Capture capture, Integration integration, Punishment p, Function<String, UUID> online) {
        String type = type(p.getType());
        if (type == null) {
            return;
        }
        UUID player = player(p, online);
        if (player == null) {
            integration.dropped("a punishment whose player is not known by UUID");
            return;
        }
        String staff = PunishmentFacts.text(p.getOperator());
        boolean ip = p.getType() == PunishmentType.IP_BAN || p.getType() == PunishmentType.TEMP_IP_BAN;
        if (capture.punishmentIssued(player, PunishmentFacts.text(p.getName()), type, PunishmentFacts.text(p.getReason()),
                staff == null ? null : online.apply(staff), staff, PunishmentFacts.millis(p.getStart()),
                PunishmentFacts.millis(p.getEnd()), ip, null, SOURCE, externalId(p))) {
            integration.sent();
        }
    }

    static void revoked(Capture capture, Integration integration, Punishment p, Function<String, UUID> online) {
        String type = type(p.getType());
        Instant end = PunishmentFacts.millis(p.getEnd());
        String id = externalId(p);
        if (type == null || id == null || PunishmentFacts.expired(end)) {
            return;
        }
        UUID player = player(p, online);
        if (player == null) {
            return;
        }
        if (capture.punishmentRevoked(player, PunishmentFacts.text(p.getName()), type, null, null, null, SOURCE, id)) {
            integration.sent();
        }
    }
}
