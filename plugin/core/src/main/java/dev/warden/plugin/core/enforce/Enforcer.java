package dev.warden.plugin.core.enforce;

import java.util.UUID;

/**
 * What the platform does for the feed. Called on the feed's own thread: implementations hand the
 * work to the server's thread (the player's region on Folia) and must not block for long.
 */
public interface Enforcer {
    /** Kicks the player with {@code message}; {@link Outcome#NOT_ONLINE} when they are not here. */
    Outcome kick(UUID player, String message);

    /** Sends the player {@code message}; {@link Outcome#NOT_ONLINE} when they are not here. */
    Outcome message(UUID player, String message);

    /** An enforcer that finds nobody online (a server with no players, or tests). */
    Enforcer NOBODY = new Enforcer() {
        @Override
        public Outcome kick(UUID player, String message) {
            return Outcome.NOT_ONLINE;
        }

        @Override
        public Outcome message(UUID player, String message) {
            return Outcome.NOT_ONLINE;
        }
    };
}
