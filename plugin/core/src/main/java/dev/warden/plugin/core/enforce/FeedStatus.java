package dev.warden.plugin.core.enforce;

import java.time.Instant;

/** The feed's part of {@code /warden status}. */
public record FeedStatus(
        String connection,
        String cursor,
        String lastAction,
        Instant lastActionAt,
        int bans,
        int mutes,
        int pendingAcks,
        String serverGroup,
        String lastError,
        Instant lastErrorAt,
        String mode) {}
