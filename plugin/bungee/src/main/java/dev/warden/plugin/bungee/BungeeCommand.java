package dev.warden.plugin.bungee;

import dev.warden.plugin.core.Status;
import dev.warden.plugin.core.StatusText;
import dev.warden.plugin.core.integration.Integration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;
import net.md_5.bungee.api.CommandSender;
import net.md_5.bungee.api.chat.TextComponent;
import net.md_5.bungee.api.plugin.Command;

/** {@code /warden status} (warden.status) and {@code /warden reload} (warden.reload) on BungeeCord. */
final class BungeeCommand extends Command {
    interface Reloader {
        /** Reloads config.yml; returns the problems found (empty on success). */
        List<String> reload();
    }

    private final Supplier<Status> status;
    private final Supplier<List<Integration.Snapshot>> integrations;
    private final Supplier<String> extra;
    private final Reloader reloader;

    BungeeCommand(Supplier<Status> status, Supplier<List<Integration.Snapshot>> integrations, Supplier<String> extra,
            Reloader reloader) {
        super("warden");
        this.status = status;
        this.integrations = integrations;
        this.extra = extra;
        this.reloader = reloader;
    }

    @Override
    public void execute(CommandSender sender, String[] args) {
        String sub = args.length == 0 ? "status" : args[0].toLowerCase(Locale.ROOT);
        switch (sub) {
            case "status" -> {
                if (!sender.hasPermission("warden.status")) {
                    send(sender, "You do not have permission (warden.status).");
                    return;
                }
                Status s = status.get();
                StatusText.lines(s, integrations.get(), Instant.now()).forEach(line -> send(sender, line));
                if (s != null) {
                    send(sender, extra.get());
                }
            }
            case "reload" -> {
                if (!sender.hasPermission("warden.reload")) {
                    send(sender, "You do not have permission (warden.reload).");
                    return;
                }
                List<String> problems = reloader.reload();
                if (problems.isEmpty()) {
                    send(sender, "Warden: config.yml reloaded.");
                } else {
                    send(sender, "Warden: config.yml has problems; nothing changed:");
                    problems.forEach(p -> send(sender, " - " + p));
                }
            }
            default -> send(sender, "Usage: /warden <status|reload>");
        }
    }

    private static void send(CommandSender sender, String line) {
        sender.sendMessage(new TextComponent(line));
    }
}
