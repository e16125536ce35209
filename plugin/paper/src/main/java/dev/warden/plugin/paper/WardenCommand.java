package dev.warden.plugin.paper;

import dev.warden.plugin.core.Status;
import dev.warden.plugin.core.StatusText;
import dev.warden.plugin.core.enforce.FeedStatus;
import dev.warden.plugin.core.integration.Integration;
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
    private final Supplier<List<Integration.Snapshot>> integrations;
    private final Reloader reloader;
    private final Supplier<FeedStatus> feed;

    WardenCommand(Supplier<Status> status, Supplier<List<Integration.Snapshot>> integrations, Reloader reloader) {
        this(status, integrations, reloader, null);
    }

    /** {@code feed}: the action feed's status (null supplier: not shown). */
    WardenCommand(Supplier<Status> status, Supplier<List<Integration.Snapshot>> integrations, Reloader reloader,
            Supplier<FeedStatus> feed) {
        this.status = status;
        this.integrations = integrations;
        this.reloader = reloader;
        this.feed = feed;
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
                Status s = status.get();
                Instant now = Instant.now();
                for (String line : StatusText.lines(s, integrations.get(), now)) {
                    sender.sendMessage(line);
                }
                if (s != null && feed != null) {
                    StatusText.feedLines(feed.get(), now).forEach(sender::sendMessage);
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
