package dev.warden.plugin.core;

import java.time.Instant;
import java.util.UUID;

/** What {@code /warden status} shows. */
public record Status(
        UUID serverId,
        String connection,
        int queued,
        int queueCapacity,
        long queueDropped,
        int spoolBatches,
        long spoolRecords,
        long spoolBytes,
        long spoolMaxBytes,
        long spoolDropped,
        long sentRecords,
        long refusedRecords,
        Instant lastSync,
        String lastError,
        Instant lastErrorAt,
        Instant nextAttempt) {}
