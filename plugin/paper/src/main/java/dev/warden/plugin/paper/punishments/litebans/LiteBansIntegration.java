package dev.warden.plugin.paper.punishments.litebans;

import dev.warden.plugin.core.Capture;
import dev.warden.plugin.core.integration.Integration;
import dev.warden.plugin.paper.punishments.PunishmentFacts;
import java.time.Instant;
import java.util.UUID;
import java.util.function.Consumer;
import litebans.api.Entry;
import litebans.api.Events;

/**
 * Punishments from LiteBans, through its event API ({@code Events.Listener}): every entry added
 * (ban, mute, warning, kick) is an issue, every entry removed (unban, unmute, unwarn) a revoke,
 * named by the entry's id. LiteBans numbers each kind apart, so the id is sent with the kind
 * (the service matches a revoke on both). Loaded only when LiteBans is enabled; the only classes
 * that name its API are in this package.
 */
public final class LiteBansIntegration {
    public static final String SOURCE = "litebans";

    private LiteBansIntegration() {}

    public static void enable(Capture capture, Integration integration) {
        Events.get().register(listener(capture, integration));
    }

    /** The listener LiteBans calls (from its own threads; the capture is safe from any thread). */
    static Events.Listener listener(Capture capture, Integration integration) {
        Consumer<Entry> added = integration.guard("a punishment issued", e -> issued(capture, integration, e));
        Consumer<Entry> removed = integration.guard("a punishment revoked", e -> revoked(capture, integration, e));
        return new Events.Listener() {
            @Override
            public void entryAdded(Entry entry) {
                added.accept(entry);
            }

            @Override
            public void entryRemoved(Entry entry) {
                removed.accept(entry);
            }
        };
    }

    /** LiteBans' entry type ("ban", "mute", "warn", "kick") as the contract's; null for others. */
    static String type(String liteBans) {
        if (liteBans == null) {
            return null;
        }
        return switch (liteBans) {
            case "ban", "mute", "kick" -> liteBans;
            case "warn" -> "warning";
            default -> null;
        };
    }

    /** LiteBans' server scope: "*" (every server) is "global"; none is left out. */
    static String scope(String serverScope) {
        String s = PunishmentFacts.text(serverScope);
        return "*".equals(s) ? "global" : s;
    }

    static void issued(Capture capture, Integration integration, Entry entry) {
        String type = type(entry.getType());
        if (type == null) {
            return;
        }
        UUID player = PunishmentFacts.uuid(entry.getUuid());
        if (player == null) {
            integration.dropped("an IP punishment that names no player");
            return;
        }
        if (capture.punishmentIssued(player, null, type, PunishmentFacts.text(entry.getReason()),
                PunishmentFacts.uuid(entry.getExecutorUUID()), PunishmentFacts.text(entry.getExecutorName()),
                PunishmentFacts.millis(entry.getDateStart()), PunishmentFacts.millis(entry.getDateEnd()),
                entry.isIpban(), scope(entry.getServerScope()), SOURCE, Long.toString(entry.getId()))) {
            integration.sent();
        }
    }

    static void revoked(Capture capture, Integration integration, Entry entry) {
        String type = type(entry.getType());
        UUID player = PunishmentFacts.uuid(entry.getUuid());
        Instant end = PunishmentFacts.millis(entry.getDateEnd());
        if (type == null || type.equals("kick") || player == null || PunishmentFacts.expired(end)) {
            return;
        }
        if (capture.punishmentRevoked(player, null, type, PunishmentFacts.uuid(entry.getRemovedByUUID()),
                PunishmentFacts.text(entry.getRemovedByName()), PunishmentFacts.text(entry.getRemovalReason()),
                SOURCE, Long.toString(entry.getId()))) {
            integration.sent();
        }
    }
}
