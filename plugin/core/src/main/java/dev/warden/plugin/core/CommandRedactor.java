package dev.warden.plugin.core;

import java.util.Collection;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Decides what of a command line is sent. Commands in {@code redact} are sent without their
 * arguments ("/login" for "/login hunter2"); commands in {@code ignore} are not sent at all.
 * Matching is on the command's label, case-insensitive, with or without a "plugin:" namespace
 * ("/authme:login" is "/login").
 */
public final class CommandRedactor {
    /** The default list: the password commands of the common login plugins. */
    public static final Set<String> DEFAULT_REDACTED = Set.of("login", "l", "log", "register", "reg",
            "changepassword", "changepass", "changepw", "cp", "unregister", "unreg", "premium",
            "2fa", "totp", "email", "setpassword", "resetpassword");

    private final Set<String> redact;
    private final Set<String> ignore;

    public CommandRedactor(Collection<String> redact, Collection<String> ignore) {
        this.redact = normalize(redact);
        this.ignore = normalize(ignore);
    }

    private static Set<String> normalize(Collection<String> labels) {
        return labels.stream()
                .map(s -> s.trim().toLowerCase(Locale.ROOT))
                .map(s -> s.startsWith("/") ? s.substring(1) : s)
                .filter(s -> !s.isEmpty())
                .collect(Collectors.toUnmodifiableSet());
    }

    /** The label of a command line: "/AuthMe:Login x" is "login". */
    static String label(String commandLine) {
        String s = commandLine.startsWith("/") ? commandLine.substring(1) : commandLine;
        int space = s.indexOf(' ');
        String first = (space < 0 ? s : s.substring(0, space)).toLowerCase(Locale.ROOT);
        int colon = first.indexOf(':');
        return colon >= 0 ? first.substring(colon + 1) : first;
    }

    /** What to send for {@code commandLine}, or null when the command is not sent at all. */
    public String apply(String commandLine) {
        if (commandLine == null || commandLine.isEmpty()) {
            return null;
        }
        String label = label(commandLine);
        if (ignore.contains(label)) {
            return null;
        }
        if (redact.contains(label)) {
            String s = commandLine.strip();
            int space = s.indexOf(' ');
            String head = space < 0 ? s : s.substring(0, space);
            return space < 0 ? head : head + " [redacted]";
        }
        return commandLine;
    }
}
