package dev.warden.plugin.paper.punishments;

import dev.warden.plugin.core.enforce.PunishmentBridge;
import dev.warden.plugin.paper.scheduler.PlatformScheduler;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;
import org.bukkit.Server;
import org.bukkit.plugin.Plugin;

/**
 * Calls into the punishment plugins from the feed's thread: console commands (for a plugin whose
 * API cannot issue a punishment) and API calls, each run on the server's thread (Folia: the global
 * region) while the feed's thread waits for it, and the text that goes into them made safe.
 */
public final class ConsoleCommands {
    /** How long the feed's thread waits for the server's thread to run a command. */
    static final long WAIT_SECONDS = 10;
    private static final Pattern COLOUR = Pattern.compile("[\u00a7&][0-9a-fk-orxA-FK-ORX]");
    private static final Pattern CONTROL = Pattern.compile("[\\p{Cntrl}\u2028\u2029\u00a7]");
    private static final Pattern SPACES = Pattern.compile("\\s+");

    private ConsoleCommands() {}

    /** Runs one command line as the console; refused when the server knows no such command. */
    @FunctionalInterface
    public interface Runner {
        void run(String commandLine) throws PunishmentBridge.Refused;
    }

    /** The server's console, through the platform's scheduler. */
    public static Runner console(Plugin plugin, PlatformScheduler scheduler) {
        return line -> {
            Server server = plugin.getServer();
            Boolean found = onServerThread(scheduler, () -> server.dispatchCommand(server.getConsoleSender(), line));
            if (!Boolean.TRUE.equals(found)) {
                throw new PunishmentBridge.Refused("the server knows no command " + line.split(" ", 2)[0]);
            }
        };
    }

    /**
     * Runs {@code task} on the server's thread and waits for it (at most {@link #WAIT_SECONDS}); what
     * it throws, or a timeout, is a refusal.
     */
    public static <T> T onServerThread(PlatformScheduler scheduler, java.util.concurrent.Callable<T> task)
            throws PunishmentBridge.Refused {
        try {
            return scheduler.<T>onServerThread(() -> {
                try {
                    return task.call();
                } catch (RuntimeException e) {
                    throw e;
                } catch (Exception e) {
                    throw new java.util.concurrent.CompletionException(e);
                }
            }).get(WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            throw new PunishmentBridge.Refused(cause.getClass().getSimpleName()
                    + (cause.getMessage() == null ? "" : ": " + cause.getMessage()));
        } catch (TimeoutException e) {
            throw new PunishmentBridge.Refused("the server's thread did not run it within " + WAIT_SECONDS + " s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PunishmentBridge.Refused("interrupted (the server is stopping)");
        }
    }

    /**
     * Text as one command argument: one line (line breaks and runs of spaces become one space), no
     * colour codes (section-sign or ampersand), no control characters, trimmed.
     */
    public static String text(String s) {
        if (s == null) {
            return "";
        }
        String t = COLOUR.matcher(s).replaceAll("");
        t = CONTROL.matcher(t.replace('\n', ' ').replace('\r', ' ').replace('\t', ' ')).replaceAll("");
        return SPACES.matcher(t).replaceAll(" ").strip();
    }
}
