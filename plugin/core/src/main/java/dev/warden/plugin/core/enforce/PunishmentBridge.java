package dev.warden.plugin.core.enforce;

import java.time.Instant;
import java.util.UUID;

/**
 * A punishment plugin (LiteBans, LibertyBans, AdvancedBan) that dashboard actions are applied
 * through, as if staff had issued them there. The platform implements one per plugin. Called on
 * the feed's thread: an implementation may wait (briefly) for the server's thread.
 */
public interface PunishmentBridge {
    /** The plugin's name as punishment records carry it in {@code source_plugin} ("litebans"). */
    String source();

    /** The plugin's name as people read it ("LiteBans"). */
    String displayName();

    /**
     * Issues a ban, mute or warning ({@code type} as the contract names it) through the plugin.
     * {@code reason} is the text to show (with an appeal link already appended), {@code expiresAt}
     * null for a permanent one. Returns the plugin's id for it when the call gives it, else null
     * (the plugin's own event brings it: the echo).
     *
     * @throws Refused when the plugin refuses it (already banned, an unknown player)
     */
    String issue(String type, UUID player, String playerName, String reason, Instant expiresAt) throws Refused;

    /**
     * Lifts a ban or mute in the plugin: by the plugin's id when {@code externalId} is not null,
     * else the player's active one of that type.
     *
     * @throws Refused when the plugin refuses it (nothing to lift)
     */
    void lift(String type, UUID player, String playerName, String externalId, String reason) throws Refused;

    /** The longest reason the plugin keeps; a longer one is cut (the appeal link is kept whole). */
    default int maxReasonLength() {
        return 2048;
    }

    /** The plugin refused an issue or a lift; the message is the ack's detail. */
    final class Refused extends Exception {
        private static final long serialVersionUID = 1L;

        public Refused(String message) {
            super(message);
        }
    }
}
