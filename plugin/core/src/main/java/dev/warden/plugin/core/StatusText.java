package dev.warden.plugin.core;

import dev.warden.plugin.core.enforce.FeedStatus;
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

    /** The action feed's lines: after {@link #lines}, when enforcement is on. */
    public static List<String> feedLines(FeedStatus f, Instant now) {
        if (f == null) {
            return List.of("  actions: off (enforcement.enabled is false)");
        }
        return List.of(
                "  actions: " + f.connection() + ", cursor " + (f.cursor() == null ? "none yet" : f.cursor())
                        + (f.serverGroup() == null ? "" : ", server group " + f.serverGroup()),
                "  last action: " + (f.lastAction() == null ? "none" : f.lastAction() + " (" + ago(f.lastActionAt(), now) + " ago)"),
                "  enforcement: " + f.mode(),
                "  known: " + f.bans() + " ban(s), " + f.mutes() + " mute(s)"
                        + (f.pendingAcks() > 0 ? "; " + f.pendingAcks() + " ack(s) waiting" : "")
                        + (f.lastError() == null ? "" : "; last error: " + f.lastError() + " (" + ago(f.lastErrorAt(), now) + " ago)"));
    }

    private static String ago(Instant from, Instant to) {
        long seconds = Math.max(0, Duration.between(from, to).toSeconds());
        return seconds < 120 ? seconds + " s" : seconds / 60 + " min";
    }
}
