package dev.warden.plugin.paper;

import dev.warden.plugin.core.CommandRedactor;
import dev.warden.plugin.core.WardenConfig;
import dev.warden.plugin.core.enforce.EnforcementConfig;
import dev.warden.plugin.core.integration.FlagCap;
import java.util.ArrayList;
import java.util.List;
import org.bukkit.configuration.ConfigurationSection;

/** config.yml into the core's {@link WardenConfig}; the defaults are those of config.yml. */
final class ConfigReader {
    private ConfigReader() {}

    /** {@code anticheat.max-flags-per-check}: the anti-cheat integrations' rate cap ({@link FlagCap}). */
    static int maxFlagsPerCheck(ConfigurationSection c) {
        return c.getInt("anticheat.max-flags-per-check", FlagCap.DEFAULT_LIMIT);
    }

    /** What is wrong with config.yml: the core's settings, then the rate cap. */
    static List<String> problems(WardenConfig config, ConfigurationSection c) {
        List<String> out = new ArrayList<>(config.problems());
        String cap = FlagCap.problem(maxFlagsPerCheck(c));
        if (cap != null) {
            out.add(cap);
        }
        out.addAll(enforcement(c).problems());
        if (EnforcementConfig.throughPlugin(c.getString("enforcement.apply-through", EnforcementConfig.WARDEN)) == null) {
            out.add("enforcement.apply-through must be " + EnforcementConfig.WARDEN + " or "
                    + EnforcementConfig.PUNISHMENT_PLUGIN + " (is " + c.getString("enforcement.apply-through", "") + ")");
        }
        return out;
    }

    /** {@code server-group} and {@code enforcement.*}: the dashboard's actions on this server. */
    static EnforcementConfig enforcement(ConfigurationSection c) {
        return new EnforcementConfig(c.getBoolean("enforcement.enabled", true), c.getString("server-group", ""),
                c.getInt("enforcement.wait-seconds", EnforcementConfig.DEFAULTS.waitSeconds()),
                Boolean.TRUE.equals(EnforcementConfig.throughPlugin(
                        c.getString("enforcement.apply-through", EnforcementConfig.WARDEN))),
                c.getBoolean("enforcement.punishment-plugin-writer", false));
    }

    /** config.yml's {@code proxy}: this server is behind a proxy that runs Warden (default false). */
    static boolean behindProxy(ConfigurationSection c) {
        return c.getBoolean("proxy", false);
    }

    static WardenConfig read(ConfigurationSection c) {
        String name = c.getString("server-name", "");
        List<String> redact = c.contains("redact-commands")
                ? c.getStringList("redact-commands")
                : CommandRedactor.DEFAULT_REDACTED.stream().sorted().toList();
        return new WardenConfig(
                c.getString("base-url", "").strip(),
                c.getString("plugin-key", "").strip(),
                c.getInt("sync-interval-seconds", 15),
                name == null || name.isBlank() ? null : name.strip(),
                c.getInt("delivery.queue-capacity", 50_000),
                c.getInt("delivery.spool-max-mb", 64),
                c.getInt("delivery.max-requests-per-cycle", 8),
                c.getInt("delivery.shutdown-flush-seconds", 5),
                c.getInt("delivery.request-timeout-seconds", 10),
                c.getInt("delivery.max-backoff-seconds", 300),
                c.getBoolean("capture.chat", true),
                c.getBoolean("capture.commands", true),
                c.getBoolean("capture.sessions", true),
                c.getBoolean("capture.send-ip", true),
                c.getBoolean("capture.punishments", true),
                c.getBoolean("capture.rank-changes", true),
                c.getString("capture.chat-channel", "global"),
                redact,
                c.getStringList("ignore-commands"));
    }
}
