package dev.warden.plugin.core;

import dev.warden.plugin.core.enforce.ActionFeed;
import dev.warden.plugin.core.enforce.BridgeLinks;
import dev.warden.plugin.core.enforce.PunishmentBridge;
import dev.warden.plugin.core.enforce.EnforcementConfig;
import dev.warden.plugin.core.enforce.Enforcer;
import dev.warden.plugin.core.enforce.FeedState;
import dev.warden.plugin.core.enforce.FeedStatus;
import dev.warden.plugin.core.enforce.FeedTransport;
import dev.warden.plugin.core.enforce.HttpFeedTransport;
import dev.warden.plugin.core.enforce.Sanctions;
import dev.warden.plugin.core.integration.FlagCap;
import dev.warden.plugin.core.integration.Integrations;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The core, wired: server id, queue, capture, spool and the delivery thread. The platform makes one
 * on enable, calls {@link #reload} on /warden reload and {@link #shutdown} on disable.
 */
public final class WardenCore {
    public static final String USER_AGENT = "warden-plugin/0.1.0";

    private final Logger logger;
    private final EventQueue queue;
    private final Capture capture;
    private final Integrations integrations;
    private final FlagCap flagCap = new FlagCap(FlagCap.DEFAULT_LIMIT);
    private final Spool spool;
    private final Delivery delivery;
    private final ScheduledExecutorService thread;
    private final Sanctions sanctions = new Sanctions();
    private final FeedState feedState;
    private volatile WardenConfig config;
    private volatile ActionFeed feed;
    private volatile PunishmentBridge bridge;
    private volatile boolean stopped;

    public WardenCore(Path dataFolder, WardenConfig config, ServerStats stats, Logger logger) throws IOException {
        this(dataFolder, config, stats, logger, new HttpTransport(config.baseUrl(), config.pluginKey(), USER_AGENT));
    }

    public WardenCore(Path dataFolder, WardenConfig config, ServerStats stats, Logger logger, Transport transport)
            throws IOException {
        this.logger = logger;
        this.config = config;
        UUID serverId = ServerIdentity.loadOrCreate(dataFolder);
        // The ban and mute lists as of the last sync: enforced from the start, even offline.
        this.feedState = FeedState.load(dataFolder, sanctions, new BridgeLinks(Clock.systemUTC()));
        this.queue = new EventQueue(config.queueCapacity());
        this.capture = new Capture(queue, serverId, config, Clock.systemUTC(), stats);
        capture.bridgeLinks(feedState.links());
        this.integrations = new Integrations(logger);
        this.spool = new Spool(dataFolder.resolve("spool"), config.spoolMaxMb() * 1024L * 1024L, logger);
        if (spool.batches() > 0) {
            logger.info("spool: " + spool.batches() + " batch(es) (" + spool.records()
                    + " records) left from before; sending them first");
        }
        this.delivery = new Delivery(queue, spool, serverId, stats, config, transport, System::currentTimeMillis, logger);
        delivery.onCycle(flagCap::newCycle);
        delivery.refreshCounts();
        this.thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "Warden delivery");
            t.setDaemon(true);
            return t;
        });
    }

    /** Starts the delivery thread: a tick every half second. */
    public void start() {
        thread.scheduleWithFixedDelay(() -> {
            try {
                delivery.tick();
            } catch (RuntimeException e) {
                logger.log(Level.WARNING, "delivery: unexpected error", e);
            }
        }, 0, 500, TimeUnit.MILLISECONDS);
    }

    /**
     * Starts reading the dashboard's actions and enforcing them through {@code enforcer}. Nothing
     * happens when {@code enforcement.enabled()} is false (the lists already loaded still answer).
     */
    public void startEnforcement(EnforcementConfig enforcement, Enforcer enforcer) {
        startEnforcement(enforcement, enforcer, new HttpFeedTransport(config.baseUrl(), config.pluginKey(), USER_AGENT));
    }

    public synchronized void startEnforcement(EnforcementConfig enforcement, Enforcer enforcer, FeedTransport transport) {
        if (!enforcement.enabled() || feed != null || stopped) {
            return;
        }
        ActionFeed started = new ActionFeed(feedState, sanctions, enforcer, serverId(), enforcement, transport,
                config.maxBackoffSeconds(), Clock.systemUTC(), logger);
        started.useBridge(bridge);
        started.start();
        feed = started;
    }

    /**
     * The punishment plugin dashboard actions may be applied through (null: none enabled). Set it
     * before {@link #startEnforcement}; a running feed takes it at once.
     */
    public void useBridge(PunishmentBridge bridge) {
        this.bridge = bridge;
        ActionFeed f = feed;
        if (f != null) {
            f.useBridge(bridge);
        }
    }

    /** The links of dashboard punishments applied through a punishment plugin. */
    public BridgeLinks bridgeLinks() {
        return feedState.links();
    }

    /** The local ban and mute lists (read them on any thread). */
    public Sanctions sanctions() {
        return sanctions;
    }

    /** The action feed's status, or null when enforcement is off. */
    public FeedStatus feedStatus() {
        ActionFeed f = feed;
        return f == null ? null : f.status();
    }

    public Capture capture() {
        return capture;
    }

    /** The integrations with other plugins that the platform enabled. */
    public Integrations integrations() {
        return integrations;
    }

    /** The rate cap on anti-cheat flags, shared by the anti-cheat integrations; reset every sync cycle. */
    public FlagCap flagCap() {
        return flagCap;
    }

    public UUID serverId() {
        return capture.serverId();
    }

    /** Applies new settings (URL, key, interval, capture switches) without losing anything queued. */
    public void reload(WardenConfig config) {
        this.config = config;
        capture.configure(config);
        Transport transport = new HttpTransport(config.baseUrl(), config.pluginKey(), USER_AGENT);
        thread.execute(() -> delivery.configure(config, transport));
    }

    /** New enforcement settings (on /warden reload): a feed that was off starts, one turned off stops. */
    public synchronized void reloadEnforcement(EnforcementConfig enforcement, Enforcer enforcer) {
        ActionFeed f = feed;
        if (f != null && !enforcement.enabled()) {
            f.stop(1000);
            feed = null;
        } else if (f == null) {
            startEnforcement(enforcement, enforcer);
        } else {
            f.configure(enforcement, new HttpFeedTransport(config.baseUrl(), config.pluginKey(), USER_AGENT),
                    config.maxBackoffSeconds());
        }
    }

    public Status status() {
        return delivery.status();
    }

    /**
     * Runs a sync cycle now on the delivery thread (heartbeat, drain, send within the backoff and
     * the cycle's budget) and gives the status right after it. When that status shows an empty
     * queue and spool, everything queued before the call has been answered for.
     */
    public Future<Status> syncNow() {
        return thread.submit(() -> {
            delivery.cycle(true);
            delivery.send(Long.MAX_VALUE);
            delivery.refreshCounts();
            return delivery.status();
        });
    }

    /**
     * Clean shutdown: an {@code online: false} heartbeat, then everything queued is spooled and
     * sent for at most {@code flushSeconds}; what is still unsent stays in the spool for the next
     * start. Blocks the calling thread for at most about {@code flushSeconds} + 1 s.
     */
    public void shutdown(int flushSeconds) {
        if (stopped) {
            return;
        }
        stopped = true;
        integrations.stopAll();
        ActionFeed f = feed;
        if (f != null) {
            f.stop(1000);
        }
        long deadline = System.currentTimeMillis() + flushSeconds * 1000L;
        thread.shutdown();
        try {
            // Let a tick in progress finish (bounded by the same deadline).
            thread.awaitTermination(Math.max(flushSeconds, 1), TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        thread.shutdownNow();
        try {
            if (!thread.awaitTermination(1, TimeUnit.SECONDS)) {
                logger.warning("shutdown: the delivery thread did not stop; what is queued is not flushed");
                return;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        // The delivery thread has stopped: this thread owns the delivery state from here.
        delivery.cycle(false);
        delivery.flush(deadline);
        Status s = delivery.status();
        if (s.spoolBatches() > 0) {
            logger.info("shutdown: " + s.spoolRecords() + " record(s) left in the spool; they are sent at the next start");
        }
    }
}
