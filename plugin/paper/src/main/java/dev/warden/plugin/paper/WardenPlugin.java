package dev.warden.plugin.paper;

import dev.warden.plugin.api.WardenApi;
import dev.warden.plugin.core.Status;
import dev.warden.plugin.core.WardenConfig;
import dev.warden.plugin.core.WardenCore;
import dev.warden.plugin.core.enforce.FeedStatus;
import dev.warden.plugin.core.enforce.PunishmentBridge;
import dev.warden.plugin.core.integration.Integration;
import dev.warden.plugin.core.integration.Integrations;
import dev.warden.plugin.paper.enforce.LoginGuard;
import dev.warden.plugin.paper.enforce.PaperEnforcer;
import dev.warden.plugin.paper.enforce.PaperMuteListener;
import dev.warden.plugin.paper.enforce.SpigotMuteListener;
import dev.warden.plugin.paper.listener.PaperChatListener;
import dev.warden.plugin.paper.listener.PlayerListener;
import dev.warden.plugin.paper.listener.ProxyAnnouncer;
import dev.warden.plugin.paper.listener.SpigotChatListener;
import dev.warden.plugin.paper.punishments.ConsoleCommands;
import dev.warden.plugin.paper.punishments.advancedban.AdvancedBanBridge;
import dev.warden.plugin.paper.punishments.litebans.LiteBansBridge;
import dev.warden.plugin.paper.scheduler.PlatformScheduler;
import java.io.IOException;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Level;
import org.bukkit.command.PluginCommand;
import org.bukkit.plugin.Plugin;
import org.bukkit.plugin.PluginManager;
import org.bukkit.plugin.ServicePriority;
import org.bukkit.plugin.java.JavaPlugin;

/** The plugin's entry point: reads config.yml, starts the core and registers thin listeners. */
public final class WardenPlugin extends JavaPlugin {
    private volatile WardenCore core;
    private PlatformScheduler scheduler;
    private volatile boolean behindProxy;

    @Override
    public void onEnable() {
        saveDefaultConfig();
        scheduler = PlatformScheduler.forServer(this);
        PluginCommand command = getCommand("warden");
        if (command != null) {
            WardenCommand executor = new WardenCommand(this::status, this::integrations, this::reload, this::feedStatus);
            command.setExecutor(executor);
            command.setTabCompleter(executor);
        }
        WardenConfig config = ConfigReader.read(getConfig());
        behindProxy = ConfigReader.behindProxy(getConfig());
        List<String> problems = ConfigReader.problems(config, getConfig());
        if (!problems.isEmpty()) {
            problems.forEach(p -> getLogger().severe("config.yml: " + p));
            getLogger().severe("Warden is not sending anything until config.yml is fixed (then /warden reload).");
            return;
        }
        start(config);
    }

    private void start(WardenConfig config) {
        boolean folia = PlatformScheduler.isFolia();
        boolean paperApi = classExists("com.destroystokyo.paper.network.NetworkClient");
        TickSampler sampler = new TickSampler(getServer(), folia);
        WardenCore started;
        try {
            started = new WardenCore(getDataFolder().toPath(), config, sampler, getLogger());
        } catch (IOException e) {
            getLogger().log(Level.SEVERE, "cannot use the data folder " + getDataFolder() + ": " + e.getMessage());
            return;
        }
        scheduler.repeatOnServerThread(sampler, TickSampler.PERIOD_TICKS);
        PluginManager plugins = getServer().getPluginManager();
        List<Integration> punishmentPlugins = new CopyOnWriteArrayList<>();
        plugins.registerEvents(new PlayerListener(started.capture(), paperApi,
                () -> punishmentPlugins.stream().anyMatch(Integration::active), () -> behindProxy), this);
        getServer().getMessenger().registerOutgoingPluginChannel(this, ProxyAnnouncer.CHANNEL);
        plugins.registerEvents(new ProxyAnnouncer(this, started.serverId(), () -> behindProxy), this);
        // The dashboard's bans and mutes: the local lists answer at login and in chat (no network).
        plugins.registerEvents(new LoginGuard(started.sanctions(), Clock.systemUTC()), this);
        if (classExists("io.papermc.paper.event.player.AsyncChatEvent")) {
            plugins.registerEvents(new PaperChatListener(started.capture()), this);
            plugins.registerEvents(new PaperMuteListener(started.sanctions(), Clock.systemUTC()), this);
        } else {
            plugins.registerEvents(new SpigotChatListener(started.capture()), this);
            plugins.registerEvents(new SpigotMuteListener(started.sanctions(), Clock.systemUTC()), this);
        }
        getServer().getServicesManager().register(WardenApi.class, started.capture(), this, ServicePriority.Normal);
        Warden.set(started.capture());
        Integrations integrations = started.integrations();
        if (plugins.isPluginEnabled("LuckPerms")) {
            // Each integration's classes load only inside its starter, so a missing or changed
            // plugin API fails that integration alone.
            integrations.enable("LuckPerms", version("LuckPerms"),
                    i -> dev.warden.plugin.paper.luckperms.LuckPermsIntegration.enable(this, started.capture(), i));
        }
        started.flagCap().limit(ConfigReader.maxFlagsPerCheck(getConfig()));
        if (plugins.isPluginEnabled("GrimAC")) {
            integrations.enable("Grim", version("GrimAC"), i -> dev.warden.plugin.paper.grim.GrimIntegration.enable(
                    this, started.capture(), started.flagCap(), i));
        }
        if (plugins.isPluginEnabled("Vulcan")) {
            integrations.enable("Vulcan", version("Vulcan"), i -> dev.warden.plugin.paper.vulcan.VulcanIntegration.enable(
                    this, started.capture(), started.flagCap(), i));
        }
        // Punishment plugins: each sends its own bans and kicks (the listener then leaves plugin kicks to it).
        PunishmentBridge bridge = null;
        if (plugins.isPluginEnabled("LiteBans")) {
            Integration liteBans = integrations.enable("LiteBans", version("LiteBans"),
                    i -> dev.warden.plugin.paper.punishments.litebans.LiteBansIntegration.enable(started.capture(), i));
            punishmentPlugins.add(liteBans);
            if (liteBans.active()) {
                // Dashboard actions through LiteBans' console commands; its events bring the ids back.
                bridge = new LiteBansBridge(ConsoleCommands.console(this, scheduler), Clock.systemUTC());
            }
        }
        if (plugins.isPluginEnabled("LibertyBans")) {
            Integration libertyBans = integrations.enable("LibertyBans", version("LibertyBans"),
                    i -> dev.warden.plugin.paper.punishments.libertybans.LibertyBansIntegration.enable(started.capture(), i));
            punishmentPlugins.add(libertyBans);
            if (bridge == null && libertyBans.active()) {
                // Through LibertyBans' API (drafts and revocation orders), from the feed's thread.
                bridge = dev.warden.plugin.paper.punishments.libertybans.LibertyBansBridge.running();
            }
        }
        if (plugins.isPluginEnabled("AdvancedBan")) {
            Integration advancedBan = integrations.enable("AdvancedBan", version("AdvancedBan"),
                    i -> dev.warden.plugin.paper.punishments.advancedban.AdvancedBanIntegration.enable(this, started.capture(), i));
            punishmentPlugins.add(advancedBan);
            if (bridge == null && advancedBan.active()) {
                // Through AdvancedBan's API (Punishment.create, PunishmentManager), on the server's thread.
                bridge = AdvancedBanBridge.onServerThread(scheduler);
            }
        }
        started.useBridge(bridge);
        started.start();
        started.startEnforcement(ConfigReader.enforcement(getConfig()), new PaperEnforcer(scheduler));
        core = started;
        getLogger().info("Warden: sending to " + config.baseUrl() + " as server " + started.serverId()
                + (folia ? " (Folia schedulers)" : "")
                + (behindProxy ? "; behind a proxy: joins and quits are the proxy's to send" : ""));
    }

    private List<String> reload() {
        reloadConfig();
        WardenConfig config = ConfigReader.read(getConfig());
        List<String> problems = ConfigReader.problems(config, getConfig());
        if (!problems.isEmpty()) {
            return problems;
        }
        behindProxy = ConfigReader.behindProxy(getConfig());
        WardenCore current = core;
        if (current == null) {
            start(config);
        } else {
            current.reload(config);
            current.reloadEnforcement(ConfigReader.enforcement(getConfig()), new PaperEnforcer(scheduler));
            current.flagCap().limit(ConfigReader.maxFlagsPerCheck(getConfig()));
        }
        return List.of();
    }

    private List<Integration.Snapshot> integrations() {
        WardenCore current = core;
        return current == null ? List.of() : current.integrations().snapshot();
    }

    /** The version a plugin reports in its plugin.yml, or null when it is not loaded. */
    @SuppressWarnings("deprecation") // getPluginMeta() is Paper's only; Spigot has getDescription().
    private String version(String plugin) {
        Plugin other = getServer().getPluginManager().getPlugin(plugin);
        return other == null ? null : other.getDescription().getVersion();
    }

    private FeedStatus feedStatus() {
        WardenCore current = core;
        return current == null ? null : current.feedStatus();
    }

    private Status status() {
        WardenCore current = core;
        return current == null ? null : current.status();
    }

    @Override
    public void onDisable() {
        Warden.set(null);
        if (scheduler != null) {
            scheduler.cancelAll();
        }
        WardenCore current = core;
        core = null;
        if (current != null) {
            current.shutdown(ConfigReader.read(getConfig()).shutdownFlushSeconds());
        }
    }

    private static boolean classExists(String name) {
        try {
            Class.forName(name, false, WardenPlugin.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }
}
