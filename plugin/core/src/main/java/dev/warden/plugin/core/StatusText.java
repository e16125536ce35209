package dev.warden.plugin.core;

import dev.warden.plugin.core.integration.Integration;
import dev.warden.plugin.core.integration.Integrations;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/** The text of {@code /warden status}, the same on every platform. */
public final class StatusText {
    private StatusText() {}

    public static List<String> lines(Status s, List<Integration.Snapshot> integrations, Instant now) {
        if (s == null) {
            return List.of("Warden: not running (config.yml has problems: see the server log, then /warden reload).");
        }
        List<String> lines = new ArrayList<>(List.of(
                "Warden: " + s.connection()
                        + (s.nextAttempt() != null ? " (next attempt in " + ago(now, s.nextAttempt()) + ")" : ""),
                "  server id: " + s.serverId(),
                "  queue: " + s.queued() + " / " + s.queueCapacity()
                        + (s.queueDropped() > 0 ? " (" + s.queueDropped() + " dropped while full)" : ""),
                "  spool: " + s.spoolRecords() + " records in " + s.spoolBatches() + " batches, "
                        + s.spoolBytes() / 1024 + " / " + s.spoolMaxBytes() / 1024 + " KiB"
                        + (s.spoolDropped() > 0 ? " (" + s.spoolDropped() + " dropped while full)" : ""),
                "  sent: " + s.sentRecords() + " records"
                        + (s.refusedRecords() > 0 ? ", refused by the service: " + s.refusedRecords() : ""),
                "  last sync: " + (s.lastSync() == null ? "never" : ago(s.lastSync(), now) + " ago"),
                "  last error: " + (s.lastError() == null ? "none"
                        : s.lastError() + " (" + ago(s.lastErrorAt(), now) + " ago)")));
        lines.addAll(Integrations.statusLines(integrations));
        return lines;
    }

    private static String ago(Instant from, Instant to) {
        long seconds = Math.max(0, Duration.between(from, to).toSeconds());
        return seconds < 120 ? seconds + " s" : seconds / 60 + " min";
    }
}
