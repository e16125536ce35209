package dev.warden.plugin.core.proxy;

import dev.warden.plugin.core.CommandRedactor;
import dev.warden.plugin.core.WardenConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A proxy's config.yml (the same on Velocity and BungeeCord), from the YAML parsed into maps: the
 * game-server plugin's keys that apply to a proxy and {@code backend-wait-seconds}. Chat is off by
 * default: the backends send it.
 */
public record ProxyConfig(WardenConfig core, int backendWaitSeconds, List<String> problems) {
    public static ProxyConfig read(Map<String, Object> yaml) {
        Reader c = new Reader(yaml == null ? Map.of() : yaml);
        String name = c.string("server-name", "");
        List<String> redact = c.has("redact-commands")
                ? c.list("redact-commands")
                : CommandRedactor.DEFAULT_REDACTED.stream().sorted().toList();
        WardenConfig core = new WardenConfig(
                c.string("base-url", "").strip(),
                c.string("plugin-key", "").strip(),
                c.integer("sync-interval-seconds", 15),
                name.isBlank() ? null : name.strip(),
                c.integer("delivery.queue-capacity", 50_000),
                c.integer("delivery.spool-max-mb", 64),
                c.integer("delivery.max-requests-per-cycle", 8),
                c.integer("delivery.shutdown-flush-seconds", 5),
                c.integer("delivery.request-timeout-seconds", 10),
                c.integer("delivery.max-backoff-seconds", 300),
                c.bool("capture.chat", false),
                c.bool("capture.commands", true),
                c.bool("capture.sessions", true),
                c.bool("capture.send-ip", true),
                false,
                false,
                c.string("capture.chat-channel", "global"),
                redact,
                c.list("ignore-commands"));
        int wait = c.integer("backend-wait-seconds", 10);
        List<String> problems = new ArrayList<>(c.problems);
        problems.addAll(core.problems());
        if (wait < 1 || wait > 300) {
            problems.add("backend-wait-seconds must be in 1..300 (is " + wait + ")");
        }
        return new ProxyConfig(core, wait, List.copyOf(problems));
    }

    /** Dotted keys over nested YAML maps; a value of the wrong type is a problem, not an exception. */
    private static final class Reader {
        final Map<String, Object> root;
        final List<String> problems = new ArrayList<>();

        Reader(Map<String, Object> root) {
            this.root = root;
        }

        Object get(String key) {
            Object at = root;
            for (String part : key.split("\\.")) {
                if (!(at instanceof Map<?, ?> map)) {
                    return null;
                }
                at = map.get(part);
            }
            return at;
        }

        boolean has(String key) {
            return get(key) != null;
        }

        String string(String key, String fallback) {
            Object v = get(key);
            return v == null ? fallback : v.toString();
        }

        int integer(String key, int fallback) {
            Object v = get(key);
            if (v == null) {
                return fallback;
            }
            if (v instanceof Integer i) {
                return i;
            }
            problems.add(key + " must be a whole number (is " + v + ")");
            return fallback;
        }

        boolean bool(String key, boolean fallback) {
            Object v = get(key);
            if (v == null) {
                return fallback;
            }
            if (v instanceof Boolean b) {
                return b;
            }
            problems.add(key + " must be true or false (is " + v + ")");
            return fallback;
        }

        List<String> list(String key) {
            Object v = get(key);
            if (v == null) {
                return List.of();
            }
            if (v instanceof List<?> l) {
                return l.stream().map(String::valueOf).toList();
            }
            problems.add(key + " must be a list");
            return List.of();
        }
    }
}
