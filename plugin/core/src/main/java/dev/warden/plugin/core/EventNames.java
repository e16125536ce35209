package dev.warden.plugin.core;

import java.util.List;
import java.util.regex.Pattern;

/** The custom-event name rule (contract §6). */
public final class EventNames {
    private static final Pattern NAME = Pattern.compile("^[a-z0-9_]{1,64}$");

    /** Prefixes of the events the service records itself; custom events may not use them. */
    public static final List<String> RESERVED_PREFIXES =
            List.of("session_", "punish_", "chat_", "rank_", "block_");

    private EventNames() {}

    /** Throws {@link IllegalArgumentException} saying which rule {@code name} breaks. */
    public static void check(String name) {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("invalid_event_name: event name '" + name
                    + "' must match ^[a-z0-9_]{1,64}$ (lowercase letters, digits, underscore)");
        }
        for (String prefix : RESERVED_PREFIXES) {
            if (name.startsWith(prefix)) {
                throw new IllegalArgumentException("reserved_prefix: event name '" + name
                        + "' uses the reserved prefix '" + prefix + "'");
            }
        }
    }
}
