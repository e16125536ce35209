package dev.warden.plugin.paper;

import dev.warden.plugin.core.Status;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;
import org.bukkit.command.Command;
import org.bukkit.command.CommandExecutor;
import org.bukkit.command.CommandSender;
import org.bukkit.command.TabCompleter;

/** {@code /warden status} (warden.status) and {@code /warden reload} (warden.reload). */
final class WardenCommand implements CommandExecutor, TabCompleter {
    interface Reloader {
        /** Reloads config.yml; returns the problems found (empty on success). */
        List<String> reload();
    }

    private final Supplier<Status> status;
    private final Reloader reloader;

    WardenCommand(Supplier<Status> status, Reloader reloader) {
        this.status = status;
        this.reloader = reloader;
    }

    @Override
    public boolean onCommand(CommandSender sender, Command command, String label, String[] args) {
        String sub = args.length == 0 ? "status" : args[0].toLowerCase(Locale.ROOT);
        switch (sub) {
            case "status" -> {
                if (!sender.hasPermission("warden.status")) {
                    sender.sendMessage("You do not have permission (warden.status).");
                    return true;
                }
                for (String line : statusLines(status.get(), Instant.now())) {
                    sender.sendMessage(line);
                }
            }
            case "reload" -> {
                if (!sender.hasPermission("warden.reload")) {
                    sender.sendMessage("You do not have permission (warden.reload).");
                    return true;
                }
                List<String> problems = reloader.reload();
                if (problems.isEmpty()) {
                    sender.sendMessage("Warden: config.yml reloaded.");
                } else {
                    sender.sendMessage("Warden: config.yml has problems; nothing changed:");
                    problems.forEach(p -> sender.sendMessage(" - " + p));
                }
            }
            default -> sender.sendMessage("Usage: /" + label + " <status|reload>");
        }
        return true;
    }

    static List<String> statusLines(Status s, Instant now) {
        if (s == null) {
            return List.of("Warden: not running (config.yml has problems: see the server log, then /warden reload).");
        }
        return List.of(
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
                        : s.lastError() + " (" + ago(s.lastErrorAt(), now) + " ago)"));
    }

    private static String ago(Instant from, Instant to) {
        long seconds = Math.max(0, Duration.between(from, to).toSeconds());
        return seconds < 120 ? seconds + " s" : seconds / 60 + " min";
    }

    @Override
    public List<String> onTabComplete(CommandSender sender, Command command, String label, String[] args) {
        if (args.length != 1) {
            return List.of();
        }
        return List.of("status", "reload").stream()
                .filter(s -> s.startsWith(args[0].toLowerCase(Locale.ROOT)))
                .toList();
    }
}
