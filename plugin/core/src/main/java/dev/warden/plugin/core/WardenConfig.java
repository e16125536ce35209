package dev.warden.plugin.core;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The plugin's settings (config.yml; every key is documented there and in docs/plugin.md). Made
 * by the platform from its configuration file, checked by {@link #problems()}.
 */
public record WardenConfig(
        String baseUrl,
        String pluginKey,
        int syncIntervalSeconds,
        String serverName,
        int queueCapacity,
        int spoolMaxMb,
        int maxRequestsPerCycle,
        int shutdownFlushSeconds,
        int requestTimeoutSeconds,
        int maxBackoffSeconds,
        boolean captureChat,
        boolean captureCommands,
        boolean captureSessions,
        boolean sendIp,
        boolean capturePunishments,
        boolean captureRankChanges,
        String chatChannel,
        List<String> redactCommands,
        List<String> ignoreCommands) {

    public WardenConfig {
        redactCommands = List.copyOf(redactCommands);
        ignoreCommands = List.copyOf(ignoreCommands);
    }

    /** The defaults of config.yml, with the given URL and key. */
    public static WardenConfig defaults(String baseUrl, String pluginKey) {
        return new WardenConfig(baseUrl, pluginKey, 15, null, 50_000, 64, 8, 5, 10, 300,
                true, true, true, true, true, true, "global",
                new ArrayList<>(CommandRedactor.DEFAULT_REDACTED.stream().sorted().toList()), List.of());
    }

    /** What is wrong with these settings, in words for the server log; empty when usable. */
    public List<String> problems() {
        List<String> out = new ArrayList<>();
        try {
            URI uri = URI.create(baseUrl == null ? "" : baseUrl.strip());
            String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
            if (!scheme.equals("http") && !scheme.equals("https") || uri.getHost() == null) {
                out.add("base-url must be an http:// or https:// URL, e.g. https://warden.example.com");
            }
        } catch (IllegalArgumentException e) {
            out.add("base-url is not a URL");
        }
        if (pluginKey == null || pluginKey.isBlank() || pluginKey.contains("PASTE")) {
            out.add("plugin-key is not set (a plugin key, wdn_plugin_...)");
        } else if (!pluginKey.startsWith("wdn_plugin_")) {
            out.add("plugin-key does not look like a plugin key (it should start with wdn_plugin_)");
        }
        range(out, "sync-interval-seconds", syncIntervalSeconds, 1, 3600);
        range(out, "delivery.queue-capacity", queueCapacity, 100, 10_000_000);
        range(out, "delivery.spool-max-mb", spoolMaxMb, 2, 100_000);
        range(out, "delivery.max-requests-per-cycle", maxRequestsPerCycle, 1, 100);
        range(out, "delivery.shutdown-flush-seconds", shutdownFlushSeconds, 0, 60);
        range(out, "delivery.request-timeout-seconds", requestTimeoutSeconds, 1, 120);
        range(out, "delivery.max-backoff-seconds", maxBackoffSeconds, 1, 3600);
        return out;
    }

    private static void range(List<String> out, String key, int v, int min, int max) {
        if (v < min || v > max) {
            out.add(key + " must be in " + min + ".." + max + " (is " + v + ")");
        }
    }

    /** Never shows the key. */
    @Override
    public String toString() {
        return "WardenConfig[baseUrl=" + baseUrl + ", pluginKey=<hidden>, syncIntervalSeconds="
                + syncIntervalSeconds + "]";
    }
}
