package dev.warden.plugin.paper.punishments.libertybans;

import dev.warden.plugin.core.Capture;
import dev.warden.plugin.core.integration.Integration;
import dev.warden.plugin.paper.punishments.PunishmentFacts;
import java.time.Instant;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.function.Function;
import space.arim.libertybans.api.CompositeVictim;
import space.arim.libertybans.api.LibertyBans;
import space.arim.libertybans.api.Operator;
import space.arim.libertybans.api.PlayerOperator;
import space.arim.libertybans.api.PlayerVictim;
import space.arim.libertybans.api.PunishmentType;
import space.arim.libertybans.api.Victim;
import space.arim.libertybans.api.event.PostPardonEvent;
import space.arim.libertybans.api.event.PostPunishEvent;
import space.arim.libertybans.api.punish.Punishment;
import space.arim.libertybans.api.scope.ServerScope;
import space.arim.omnibus.OmnibusProvider;
import space.arim.omnibus.events.EventBus;
import space.arim.omnibus.events.EventConsumer;
import space.arim.omnibus.events.ListenerPriorities;

/**
 * Punishments from LibertyBans, through its API's events on the Omnibus event bus: a punishment
 * made ({@code PostPunishEvent}) is an issue, a pardon ({@code PostPardonEvent}) a revoke, named by
 * LibertyBans' punishment id (one sequence for every kind). Loaded only when LibertyBans is
 * enabled; the only classes that name its API are in this package.
 */
public final class LibertyBansIntegration {
    public static final String SOURCE = "libertybans";
    /** The staff name sent for LibertyBans' console operator. */
    static final String CONSOLE = "Console";

    private LibertyBansIntegration() {}

    public static void enable(Capture capture, Integration integration) {
        LibertyBans api = OmnibusProvider.getOmnibus().getRegistry().getProvider(LibertyBans.class)
                .orElseThrow(() -> new IllegalStateException("LibertyBans has not registered its API"));
        ServerScope global = api.getScopeManager().globalScope();
        Function<ServerScope, String> scopes = s -> s == null ? null
                : global.equals(s) ? "global" : PunishmentFacts.text(api.getFormatter().formatScope(s));
        EventBus bus = api.getOmnibus().getEventBus();
        bus.registerListener(PostPunishEvent.class, ListenerPriorities.NORMAL, onPunish(capture, integration, scopes));
        bus.registerListener(PostPardonEvent.class, ListenerPriorities.NORMAL, onPardon(capture, integration));
    }

    /** The handler for punishments made (called on LibertyBans' threads). */
    static EventConsumer<PostPunishEvent> onPunish(Capture capture, Integration integration,
            Function<ServerScope, String> scopes) {
        Consumer<PostPunishEvent> guarded = integration.guard("a punishment issued",
                e -> issued(capture, integration, e.getPunishment(), scopes));
        return guarded::accept;
    }

    /** The handler for pardons. */
    static EventConsumer<PostPardonEvent> onPardon(Capture capture, Integration integration) {
        Consumer<PostPardonEvent> guarded = integration.guard("a punishment revoked",
                e -> revoked(capture, integration, e.getPunishment(), e.getOperator()));
        return guarded::accept;
    }

    static String type(PunishmentType type) {
        return switch (type) {
            case BAN -> "ban";
            case MUTE -> "mute";
            case WARN -> "warning";
            case KICK -> "kick";
        };
    }

    /** The player a victim names: a player, or a player with their address; null for an address alone. */
    static UUID player(Victim victim) {
        if (victim instanceof PlayerVictim p) {
            return p.getUUID();
        }
        if (victim instanceof CompositeVictim c && !CompositeVictim.WILDCARD_UUID.equals(c.getUUID())) {
            return c.getUUID();
        }
        return null;
    }

    static UUID staffUuid(Operator operator) {
        return operator instanceof PlayerOperator p ? p.getUUID() : null;
    }

    /** LibertyBans names only the console; a player operator is a UUID alone. */
    static String staffName(Operator operator) {
        return operator != null && operator.getType() == Operator.OperatorType.CONSOLE ? CONSOLE : null;
    }

    static void issued(Capture capture, Integration integration, Punishment p, Function<ServerScope, String> scopes) {
        UUID player = player(p.getVictim());
        if (player == null) {
            integration.dropped("an IP punishment that names no player");
            return;
        }
        Instant end = p.getEndDate();
        if (capture.punishmentIssued(player, null, type(p.getType()), PunishmentFacts.text(p.getReason()),
                staffUuid(p.getOperator()), staffName(p.getOperator()), p.getStartDate(),
                Punishment.PERMANENT_END_DATE.equals(end) ? null : end,
                p.getVictim() instanceof CompositeVictim, scopes.apply(p.getScope()), SOURCE,
                Long.toString(p.getIdentifier()))) {
            integration.sent();
        }
    }

    static void revoked(Capture capture, Integration integration, Punishment p, Operator pardoner) {
        UUID player = player(p.getVictim());
        if (player == null) {
            return;
        }
        if (capture.punishmentRevoked(player, null, type(p.getType()), staffUuid(pardoner), staffName(pardoner), null,
                SOURCE, Long.toString(p.getIdentifier()))) {
            integration.sent();
        }
    }
}
