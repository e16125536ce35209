package dev.warden.plugin.paper.punishments.libertybans;

import dev.warden.plugin.core.enforce.PunishmentBridge;
import dev.warden.plugin.paper.punishments.ConsoleCommands;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import space.arim.libertybans.api.LibertyBans;
import space.arim.libertybans.api.PlayerVictim;
import space.arim.libertybans.api.PunishmentType;
import space.arim.libertybans.api.punish.Punishment;
import space.arim.libertybans.api.punish.RevocationOrder;
import space.arim.omnibus.OmnibusProvider;

/**
 * Dashboard actions applied through LibertyBans' API (asynchronous, callable from any thread):
 * a draft punishment ({@code getDrafter().draftBuilder()}: type, the player as victim, reason,
 * duration, zero being permanent; the console as operator) enacted with {@code enactPunishment()},
 * which gives the punishment and its id, or nothing when the player already has an active ban or
 * mute (a refusal); a lift through {@code getRevoker()}: by the linked id, else the player's
 * active ban or mute. LibertyBans then fires its own events, which {@link LibertyBansIntegration}
 * hands to the core (the echo).
 */
public final class LibertyBansBridge implements PunishmentBridge {
    /** LibertyBans' reason column: 256 characters. */
    static final int MAX_REASON = 256;
    static final long WAIT_SECONDS = 10;

    private final LibertyBans api;
    private final Clock clock;

    LibertyBansBridge(LibertyBans api, Clock clock) {
        this.api = api;
        this.clock = clock;
    }

    /** The bridge over the running LibertyBans' API. */
    public static PunishmentBridge running() {
        LibertyBans api = OmnibusProvider.getOmnibus().getRegistry().getProvider(LibertyBans.class)
                .orElseThrow(() -> new IllegalStateException("LibertyBans has not registered its API"));
        return new LibertyBansBridge(api, Clock.systemUTC());
    }

    @Override
    public String source() {
        return LibertyBansIntegration.SOURCE;
    }

    @Override
    public String displayName() {
        return "LibertyBans";
    }

    @Override
    public int maxReasonLength() {
        return MAX_REASON;
    }

    static PunishmentType type(String type) throws Refused {
        return switch (type) {
            case "ban" -> PunishmentType.BAN;
            case "mute" -> PunishmentType.MUTE;
            case "warning" -> PunishmentType.WARN;
            default -> throw new Refused("LibertyBans cannot apply a " + type);
        };
    }

    @Override
    public String issue(String type, UUID player, String playerName, String reason, Instant expiresAt) throws Refused {
        String text = ConsoleCommands.text(reason);
        Duration duration = expiresAt == null || type.equals("warning") ? Duration.ZERO
                : Duration.ofSeconds(Math.max(1, Duration.between(clock.instant(), expiresAt).toSeconds()));
        Optional<Punishment> made = await(api.getDrafter().draftBuilder().type(type(type)).victim(PlayerVictim.of(player))
                .reason(text.length() > MAX_REASON ? text.substring(0, MAX_REASON).strip() : text).duration(duration)
                .build().enactPunishment());
        if (made == null || made.isEmpty()) {
            throw new Refused("the player already has an active " + type + " there");
        }
        return Long.toString(made.get().getIdentifier());
    }

    @Override
    public void lift(String type, UUID player, String playerName, String externalId, String reason) throws Refused {
        RevocationOrder order;
        if (externalId != null) {
            try {
                order = api.getRevoker().revokeById(Long.parseLong(externalId));
            } catch (NumberFormatException e) {
                throw new Refused("not a LibertyBans id: " + externalId);
            }
        } else if (player != null && (type.equals("ban") || type.equals("mute"))) {
            order = api.getRevoker().revokeByTypeAndVictim(type(type), PlayerVictim.of(player));
        } else {
            throw new Refused("nothing names the " + type + " to lift");
        }
        if (!Boolean.TRUE.equals(await(order.undoPunishment()))) {
            throw new Refused("no active " + type + " " + (externalId == null ? "of that player" : externalId));
        }
    }

    private static <T> T await(CompletionStage<T> stage) throws Refused {
        try {
            return stage.toCompletableFuture().get(WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            throw new Refused(cause.getClass().getSimpleName() + (cause.getMessage() == null ? "" : ": " + cause.getMessage()));
        } catch (TimeoutException e) {
            throw new Refused("no answer within " + WAIT_SECONDS + " s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Refused("interrupted (the server is stopping)");
        }
    }
}
