package dev.warden.plugin.velocity;

import com.velocitypowered.api.command.CommandSource;
import com.velocitypowered.api.command.SimpleCommand;
import dev.warden.plugin.core.Status;
import dev.warden.plugin.core.StatusText;
import dev.warden.plugin.core.integration.Integration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;
import net.kyori.adventure.text.Component;

/** {@code /warden status} (warden.status) and {@code /warden reload} (warden.reload) on the proxy. */
final class ProxyCommand implements SimpleCommand {
    interface Reloader {
        /** Reloads config.yml; returns the problems found (empty on success). */
        List<String> reload();
    }

    private final Supplier<Status> status;
    private final Supplier<List<Integration.Snapshot>> integrations;
    private final Supplier<String> extra;
    private final Reloader reloader;

    /** {@code extra}: a line about the proxy's backends for the status, or null. */
    ProxyCommand(Supplier<Status> status, Supplier<List<Integration.Snapshot>> integrations, Supplier<String> extra,
            Reloader reloader) {
        this.status = status;
        this.integrations = integrations;
        this.extra = extra;
        this.reloader = reloader;
    }

    @Override
    public void execute(Invocation invocation) {
        CommandSource source = invocation.source();
        String[] args = invocation.arguments();
        String sub = args.length == 0 ? "status" : args[0].toLowerCase(Locale.ROOT);
        switch (sub) {
            case "status" -> {
                if (!source.hasPermission("warden.status")) {
                    send(source, "You do not have permission (warden.status).");
                    return;
                }
                Status s = status.get();
                StatusText.lines(s, integrations.get(), Instant.now()).forEach(line -> send(source, line));
                String more = s == null ? null : extra.get();
                if (more != null) {
                    send(source, more);
                }
            }
            case "reload" -> {
                if (!source.hasPermission("warden.reload")) {
                    send(source, "You do not have permission (warden.reload).");
                    return;
                }
                List<String> problems = reloader.reload();
                if (problems.isEmpty()) {
                    send(source, "Warden: config.yml reloaded.");
                } else {
                    send(source, "Warden: config.yml has problems; nothing changed:");
                    problems.forEach(p -> send(source, " - " + p));
                }
            }
            default -> send(source, "Usage: /" + invocation.alias() + " <status|reload>");
        }
    }

    @Override
    public List<String> suggest(Invocation invocation) {
        String[] args = invocation.arguments();
        String prefix = args.length == 0 ? "" : args[0].toLowerCase(Locale.ROOT);
        if (args.length > 1) {
            return List.of();
        }
        return List.of("status", "reload").stream().filter(s -> s.startsWith(prefix)).toList();
    }

    @Override
    public boolean hasPermission(Invocation invocation) {
        CommandSource source = invocation.source();
        return source.hasPermission("warden.status") || source.hasPermission("warden.reload");
    }

    private static void send(CommandSource source, String line) {
        source.sendMessage(Component.text(line));
    }
}
