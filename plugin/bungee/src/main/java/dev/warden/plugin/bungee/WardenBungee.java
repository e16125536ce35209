package dev.warden.plugin.bungee;

import dev.warden.plugin.core.Status;
import dev.warden.plugin.core.WardenCore;
import dev.warden.plugin.core.integration.Integration;
import dev.warden.plugin.core.proxy.BackendIds;
import dev.warden.plugin.core.proxy.NetworkSessions;
import dev.warden.plugin.core.proxy.ProxyConfig;
import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import net.md_5.bungee.api.plugin.Plugin;
import net.md_5.bungee.api.scheduler.ScheduledTask;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.error.YAMLException;

/**
 * The BungeeCord plugin's entry point (named in bungee.yml): reads config.yml, starts the core with
 * the proxy's heartbeat, and registers the listener, the announcement channel and {@code /warden}.
 */
public final class WardenBungee extends Plugin {
    private volatile WardenCore core;
    private volatile NetworkSessions sessions;
    private ScheduledTask expiry;

    @Override
    public void onEnable() {
        getProxy().registerChannel(BungeeListener.CHANNEL);
        getProxy().getPluginManager().registerCommand(this,
                new BungeeCommand(this::status, this::integrations, this::backendLine, this::reload));
        ProxyConfig config = readConfig();
        if (!config.problems().isEmpty()) {
            config.problems().forEach(p -> getLogger().severe("config.yml: " + p));
            getLogger().severe("Warden is not sending anything until config.yml is fixed (then /warden reload).");
            return;
        }
        start(config);
    }

    private void start(ProxyConfig config) {
        Path dataFolder = getDataFolder().toPath();
        WardenCore started;
        BackendIds ids;
        try {
            started = new WardenCore(dataFolder, config.core(), new BungeeStats(getProxy()), getLogger());
            ids = BackendIds.load(dataFolder, getLogger());
        } catch (IOException e) {
            getLogger().severe("cannot use the data folder " + dataFolder + ": " + e.getMessage());
            return;
        }
        NetworkSessions network = new NetworkSessions(started.serverId(), ids, started.capture(),
                Duration.ofSeconds(config.backendWaitSeconds()), getLogger());
        getProxy().getPluginManager().registerListener(this, new BungeeListener(network, started.capture(),
                (name, sender) -> getProxy().getPluginManager().isExecutableCommand(name, sender), getLogger()));
        expiry = getProxy().getScheduler().schedule(this, network::expire, 1, 1, TimeUnit.SECONDS);
        started.start();
        sessions = network;
        core = started;
        getLogger().info("Warden: sending to " + config.core().baseUrl() + " as proxy " + started.serverId());
    }

    private ProxyConfig readConfig() {
        Path file = getDataFolder().toPath().resolve("config.yml");
        try {
            if (!Files.exists(file)) {
                Files.createDirectories(file.getParent());
                try (InputStream in = getResourceAsStream("config.yml")) {
                    if (in == null) {
                        throw new IOException("config.yml is missing from the plugin jar");
                    }
                    Files.copy(in, file);
                }
            }
            try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
                Object yaml = new Yaml().load(r);
                @SuppressWarnings("unchecked")
                Map<String, Object> map = yaml instanceof Map<?, ?> ? (Map<String, Object>) yaml : Map.of();
                return ProxyConfig.read(map);
            }
        } catch (IOException | YAMLException e) {
            ProxyConfig defaults = ProxyConfig.read(Map.of());
            return new ProxyConfig(defaults.core(), defaults.backendWaitSeconds(),
                    List.of("cannot read " + file + ": " + e.getMessage()));
        }
    }

    private List<String> reload() {
        ProxyConfig config = readConfig();
        if (!config.problems().isEmpty()) {
            return config.problems();
        }
        WardenCore current = core;
        if (current == null) {
            start(config);
        } else {
            current.reload(config.core());
        }
        return List.of();
    }

    private Status status() {
        WardenCore current = core;
        return current == null ? null : current.status();
    }

    private List<Integration.Snapshot> integrations() {
        WardenCore current = core;
        return current == null ? List.of() : current.integrations().snapshot();
    }

    private String backendLine() {
        NetworkSessions current = sessions;
        return "  joins waiting for their backend's server id: " + (current == null ? 0 : current.waiting());
    }

    @Override
    public void onDisable() {
        if (expiry != null) {
            expiry.cancel();
        }
        WardenCore current = core;
        core = null;
        if (current != null) {
            current.shutdown(readConfig().core().shutdownFlushSeconds());
        }
    }
}
