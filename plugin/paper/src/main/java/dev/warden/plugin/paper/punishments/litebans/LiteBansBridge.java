package dev.warden.plugin.paper.punishments.litebans;

import dev.warden.plugin.core.enforce.PunishmentBridge;
import dev.warden.plugin.paper.punishments.ConsoleCommands;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * Dashboard actions applied through LiteBans. Its API has no method that adds a punishment, so
 * this runs its console commands ({@code litebans:ban}, {@code tempban}, {@code mute},
 * {@code tempmute}, {@code warn}, {@code unban}, {@code unmute}) with the silent flag {@code -s},
 * naming the player by UUID; the id comes back from its {@code entryAdded} event (the echo, which
 * {@link LiteBansIntegration} hands to the core). A lift names the player too (their active ban
 * or mute), as LiteBans' commands do.
 */
public final class LiteBansBridge implements PunishmentBridge {
    /** LiteBans keeps reasons up to this many characters. */
    static final int MAX_REASON = 2048;
    /** A reason whose first word LiteBans would read as a flag, a duration, a server scope or a template. */
    private static final Pattern AMBIGUOUS = Pattern.compile("^(-|\\d|server:|#|@).*", Pattern.CASE_INSENSITIVE);

    private final ConsoleCommands.Runner console;
    private final Clock clock;

    public LiteBansBridge(ConsoleCommands.Runner console, Clock clock) {
        this.console = console;
        this.clock = clock;
    }

    @Override
    public String source() {
        return LiteBansIntegration.SOURCE;
    }

    @Override
    public String displayName() {
        return "LiteBans";
    }

    @Override
    public int maxReasonLength() {
        return MAX_REASON;
    }

    @Override
    public String issue(String type, UUID player, String playerName, String reason, Instant expiresAt) throws Refused {
        console.run(issueCommand(type, player, reason, expiresAt, clock.instant()));
        return null;
    }

    @Override
    public void lift(String type, UUID player, String playerName, String externalId, String reason) throws Refused {
        if (player == null) {
            throw new Refused("LiteBans lifts by player, and the revoke names none");
        }
        String command = switch (type) {
            case "ban" -> "litebans:unban";
            case "mute" -> "litebans:unmute";
            default -> throw new Refused("LiteBans cannot lift a " + type);
        };
        console.run(command + " -s " + player + reasonArgument(reason));
    }

    /** The command for an issue: {@code litebans:tempban -s <uuid> <minutes>m <reason>} and the like. */
    static String issueCommand(String type, UUID player, String reason, Instant expiresAt, Instant now) throws Refused {
        boolean temporary = expiresAt != null && !type.equals("warning");
        String command = switch (type) {
            case "ban" -> temporary ? "litebans:tempban" : "litebans:ban";
            case "mute" -> temporary ? "litebans:tempmute" : "litebans:mute";
            case "warning" -> "litebans:warn";
            default -> throw new Refused("LiteBans cannot apply a " + type);
        };
        return command + " -s " + player + (temporary ? " " + duration(expiresAt, now) : "") + reasonArgument(reason);
    }

    /** Time left, in whole minutes rounded up (at least one), in LiteBans' syntax ({@code 90m}). */
    static String duration(Instant expiresAt, Instant now) {
        long seconds = Math.max(60, Duration.between(now, expiresAt).toSeconds());
        return (seconds + 59) / 60 + "m";
    }

    /** The reason as the command's last argument (with its leading space), or nothing. */
    static String reasonArgument(String reason) {
        String t = ConsoleCommands.text(reason);
        if (t.isEmpty()) {
            return "";
        }
        if (AMBIGUOUS.matcher(t).matches()) {
            t = "Reason: " + t;
        }
        return " " + (t.length() > MAX_REASON ? t.substring(0, MAX_REASON).strip() : t);
    }
}
