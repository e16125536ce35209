package dev.warden.plugin.paper.punishments;

import java.time.Instant;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * What the punishment-plugin integrations share, without naming any plugin's API: reading the
 * ids, times and scopes those plugins hand over.
 */
public final class PunishmentFacts {
    private static final Pattern DASHED =
            Pattern.compile("\\p{XDigit}{8}-\\p{XDigit}{4}-\\p{XDigit}{4}-\\p{XDigit}{4}-\\p{XDigit}{12}");
    private static final Pattern PLAIN = Pattern.compile("\\p{XDigit}{32}");

    private PunishmentFacts() {}

    /**
     * A UUID written with or without dashes; null for anything else (a plugin's "CONSOLE", a
     * player name, an IP address, null).
     */
    public static UUID uuid(String s) {
        if (s == null) {
            return null;
        }
        String t = s.trim();
        if (PLAIN.matcher(t).matches()) {
            t = t.substring(0, 8) + '-' + t.substring(8, 12) + '-' + t.substring(12, 16) + '-' + t.substring(16, 20)
                    + '-' + t.substring(20);
        } else if (!DASHED.matcher(t).matches()) {
            return null;
        }
        return UUID.fromString(t);
    }

    /** A time in epoch milliseconds; null for zero or less (the plugins' "none" or "permanent"). */
    public static Instant millis(long epochMillis) {
        return epochMillis > 0 ? Instant.ofEpochMilli(epochMillis) : null;
    }

    /**
     * Whether a punishment ending at {@code end} (null: permanent) has run out: its removal then
     * is the plugin tidying up an expiry, not a staff member's revoke, and is not sent.
     */
    public static boolean expired(Instant end) {
        return end != null && !end.isAfter(Instant.now());
    }

    /** A reason as sent: blank is none. */
    public static String text(String s) {
        return s == null || s.isBlank() ? null : s;
    }
}
