package dev.warden.plugin.velocity;

import com.google.inject.Inject;
import com.velocitypowered.api.command.CommandMeta;
import com.velocitypowered.api.event.Subscribe;
import com.velocitypowered.api.event.proxy.ProxyInitializeEvent;
import com.velocitypowered.api.event.proxy.ProxyShutdownEvent;
import com.velocitypowered.api.plugin.annotation.DataDirectory;
import com.velocitypowered.api.proxy.ProxyServer;
import com.velocitypowered.api.scheduler.ScheduledTask;
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
import java.util.logging.Logger;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.error.YAMLException;

/**
 * The Velocity plugin's entry point (named in velocity-plugin.json): reads config.yml, starts the
 * core with the proxy's heartbeat, and registers the listener, the announcement channel and
 * {@code /warden}.
 */
public final class WardenVelocity {
    private final ProxyServer server;
    private final Path dataFolder;
    // Velocity routes java.util.logging into its own log.
    private final Logger logger = Logger.getLogger("warden");
    private volatile WardenCore core;
    private volatile NetworkSessions sessions;
    private ScheduledTask expiry;
    private CommandMeta command;

    @Inject
    public WardenVelocity(ProxyServer server, @DataDirectory Path dataFolder) {
        this.server = server;
        this.dataFolder = dataFolder;
    }

    @Subscribe
    public void onInitialize(ProxyInitializeEvent event) {
        server.getChannelRegistrar().register(ProxyListener.CHANNEL);
        command = server.getCommandManager().metaBuilder("warden").plugin(this).build();
        server.getCommandManager().register(command,
                new ProxyCommand(this::status, this::integrations, this::backendLine, this::reload));
        ProxyConfig config = readConfig();
        if (!config.problems().isEmpty()) {
            config.problems().forEach(p -> logger.severe("config.yml: " + p));
            logger.severe("Warden is not sending anything until config.yml is fixed (then /warden reload).");
            return;
        }
        start(config);
    }

    private void start(ProxyConfig config) {
        WardenCore started;
        BackendIds ids;
        try {
            started = new WardenCore(dataFolder, config.core(), new ProxyStats(server), logger);
            ids = BackendIds.load(dataFolder, logger);
        } catch (IOException e) {
            logger.severe("cannot use the data folder " + dataFolder + ": " + e.getMessage());
            return;
        }
        NetworkSessions network = new NetworkSessions(started.serverId(), ids, started.capture(),
                Duration.ofSeconds(config.backendWaitSeconds()), logger);
        server.getEventManager().register(this, new ProxyListener(network, started.capture(),
                (alias, source) -> server.getCommandManager().hasCommand(alias, source), logger));
        expiry = server.getScheduler().buildTask(this, network::expire).repeat(1, TimeUnit.SECONDS).schedule();
        started.start();
        sessions = network;
        core = started;
        logger.info("Warden: sending to " + config.core().baseUrl() + " as proxy " + started.serverId());
    }

    private ProxyConfig readConfig() {
        Path file = dataFolder.resolve("config.yml");
        try {
            if (!Files.exists(file)) {
                Files.createDirectories(dataFolder);
                try (InputStream in = WardenVelocity.class.getResourceAsStream("/config.yml")) {
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
        int waiting = current == null ? 0 : current.waiting();
        return "  joins waiting for their backend's server id: " + waiting;
    }

    @Subscribe
    public void onShutdown(ProxyShutdownEvent event) {
        if (expiry != null) {
            expiry.cancel();
        }
        if (command != null) {
            server.getCommandManager().unregister(command);
        }
        NetworkSessions network = sessions;
        if (network != null) {
            network.expire();
        }
        WardenCore current = core;
        core = null;
        if (current != null) {
            current.shutdown(readConfig().core().shutdownFlushSeconds());
        }
    }
}
