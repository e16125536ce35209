package dev.warden.plugin.core.enforce;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.warden.plugin.core.Backoff;
import dev.warden.plugin.core.Transport;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The dashboard's actions, read and enforced on this server. One thread long-polls the feed,
 * applies each new action (the local lists, then the platform: kick, message), saves the cursor,
 * the applied ids and the lists ({@link FeedState}), then acknowledges the outcomes. Delivery is
 * at least once; an action whose id was applied already is never applied again. Each ban keeps the
 * link to its appeal form the feed gave it; links that near expiry are refreshed in batches.
 *
 * <p>Errors: 429 waits for {@code Retry-After}; 401/403 retry every minute; anything else backs off
 * with jitter up to {@code maxBackoffSeconds}. Meanwhile the lists stay as of the last sync.
 */
public final class ActionFeed {
    /** Kicks and warnings older than this when they arrive (a first run, a long outage) are skipped. */
    public static final Duration STALE_AFTER = Duration.ofMinutes(10);
    /** A ban's appeal link this close to its expiry (or missing) is refreshed. */
    public static final Duration APPEAL_REFRESH_BEFORE = Duration.ofDays(3);
    /** How often one ban's link may be asked for. */
    static final Duration APPEAL_ASK_EVERY = Duration.ofHours(1);
    static final int ACKS_PER_REQUEST = 100;
    static final int APPEAL_LINKS_PER_REQUEST = 100;
    private static final java.time.format.DateTimeFormatter UNTIL =
            java.time.format.DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'").withZone(java.time.ZoneOffset.UTC);

    private final FeedState state;
    private final Sanctions sanctions;
    private final Enforcer enforcer;
    private final UUID serverId;
    private final Clock clock;
    private final Logger logger;
    private volatile FeedTransport transport;
    private volatile EnforcementConfig config;
    private volatile Backoff backoff;
    private volatile Thread thread;
    private volatile boolean stopped;
    /** The punishment plugin actions may be applied through, or null when none is enabled. */
    private volatile PunishmentBridge bridge;
    private final BridgeDispatch through;

    private volatile String connection = "not connected yet";
    private volatile String lastError;
    private volatile Instant lastErrorAt;
    private volatile String cursorVisible;
    private volatile int pendingVisible;
    /** When each ban's appeal link was last asked for (the feed's thread only). */
    private final Map<UUID, Instant> appealAsked = new HashMap<>();

    public ActionFeed(FeedState state, Sanctions sanctions, Enforcer enforcer, UUID serverId, EnforcementConfig config,
            FeedTransport transport, int maxBackoffSeconds, Clock clock, Logger logger) {
        this.state = state;
        this.sanctions = sanctions;
        this.enforcer = enforcer;
        this.serverId = serverId;
        this.clock = clock;
        this.logger = logger;
        this.cursorVisible = state.cursor;
        this.pendingVisible = state.pendingAcks.size();
        this.through = new BridgeDispatch(state.links(), logger);
        configure(config, transport, maxBackoffSeconds);
    }

    /**
     * The punishment plugin to apply actions through ({@code apply-through: punishment-plugin})
     * and to lift its own punishments in; null when no supported one is enabled.
     */
    public void useBridge(PunishmentBridge bridge) {
        this.bridge = bridge;
        if (thread != null) {
            warnFallback();
        }
    }

    /** The links of dashboard punishments applied through a punishment plugin. */
    public BridgeLinks links() {
        return state.links();
    }

    /** How long an issue applied through the plugin waits for the plugin's event naming its id. */
    void echoWait(Duration wait) {
        through.echoWait = wait;
    }

    private void warnFallback() {
        if (config.throughPlugin() && bridge == null) {
            logger.warning("enforcement.apply-through is punishment-plugin, but no supported punishment plugin"
                    + " (LiteBans, LibertyBans, AdvancedBan) is enabled: Warden's own lists apply");
        }
    }

    /** New settings (on /warden reload); the next request uses them. */
    public void configure(EnforcementConfig config, FeedTransport transport, int maxBackoffSeconds) {
        this.config = config;
        this.transport = transport;
        this.backoff = new Backoff(1000, maxBackoffSeconds * 1000L, () -> ThreadLocalRandom.current().nextDouble());
        if (thread != null) {
            warnFallback();
        }
    }

    /** Starts the feed's thread. */
    public synchronized void start() {
        Thread t = new Thread(this::run, "Warden action feed");
        t.setDaemon(true);
        thread = t;
        warnFallback();
        t.start();
    }

    /** Stops the thread (waking a long-poll), waiting at most {@code millis} for it. */
    public void stop(long millis) {
        stopped = true;
        Thread t = thread;
        if (t != null) {
            t.interrupt();
            try {
                t.join(millis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void run() {
        while (!stopped) {
            long wait;
            try {
                wait = step(config.waitSeconds());
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                logger.log(Level.WARNING, "action feed: unexpected error", e);
                wait = backoff.nextDelayMillis();
            }
            if (wait > 0) {
                try {
                    Thread.sleep(wait);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }

    /**
     * One round: sends waiting acks, reads the next page (long-polling up to {@code waitSeconds}),
     * applies it, saves, acknowledges. Returns how long to wait before the next round (0: at once).
     */
    public long step(int waitSeconds) throws InterruptedException {
        if (!state.pendingAcks.isEmpty()) {
            long wait = sendAcks();
            if (wait > 0) {
                return wait;
            }
        }
        Transport.Response response;
        try {
            response = transport.poll(state.cursor, waitSeconds, Duration.ofSeconds(waitSeconds + 15L));
        } catch (IOException e) {
            return failure("network error: " + e.getClass().getSimpleName()
                    + (e.getMessage() == null ? "" : " (" + e.getMessage() + ")"), -1);
        }
        if (response.status() != 200) {
            return refused(response);
        }
        List<Action> actions = new ArrayList<>();
        String next;
        try {
            JsonObject page = JsonParser.parseString(response.body()).getAsJsonObject();
            for (JsonElement e : page.getAsJsonArray("actions")) {
                actions.add(Action.parse(e));
            }
            next = Action.string(page, "cursor");
        } catch (RuntimeException e) {
            return failure("the feed answered something unreadable (" + e.getMessage() + ")", -1);
        }
        connection = "connected";
        backoff.reset();
        sanctions.prune(clock.instant());
        boolean changed = false;
        for (Action a : actions) {
            if (!state.applied(a.id())) {
                FeedState.Ack ack = apply(a);
                state.markApplied(a.id());
                state.pendingAcks.add(ack);
                state.lastAction = describe(a) + " (" + ack.outcome().wire() + ")";
                state.lastActionAt = ack.at();
            }
            if (a.cursor() != null) {
                state.cursor = a.cursor();
            }
            changed = true;
        }
        if (next != null && !next.equals(state.cursor)) {
            state.cursor = next;
            changed = true;
        }
        // A link named by a late echo (the plugin's event came after the wait) is saved too.
        if (changed || state.links().takeChanged()) {
            try {
                state.save(sanctions);
            } catch (IOException e) {
                error("cannot save " + FeedState.FILE_NAME + " (" + e.getMessage() + "); the lists hold until restart");
            }
        }
        cursorVisible = state.cursor;
        pendingVisible = state.pendingAcks.size();
        long wait = state.pendingAcks.isEmpty() ? 0 : sendAcks();
        if (wait == 0 && refreshAppealLinks()) {
            try {
                state.save(sanctions);
            } catch (IOException e) {
                error("cannot save " + FeedState.FILE_NAME + " (" + e.getMessage() + ")");
            }
        }
        return wait;
    }

    /**
     * Asks for fresh appeal links for the bans whose link is missing or expires within
     * {@link #APPEAL_REFRESH_BEFORE}, each at most once per {@link #APPEAL_ASK_EVERY}, 100 a request.
     * True when a link changed. A failure is logged and waits for the next ask: the lists never
     * depend on it.
     */
    boolean refreshAppealLinks() throws InterruptedException {
        Instant now = clock.instant();
        appealAsked.values().removeIf(at -> !at.plus(APPEAL_ASK_EVERY).isAfter(now));
        List<UUID> due = new ArrayList<>();
        for (Sanctions.Entry e : sanctions.entries()) {
            if (e.type().equals("ban") && e.activeAt(now) && !appealAsked.containsKey(e.punishmentId())
                    && (e.appeal() == null || e.appeal().expiresAt().isBefore(now.plus(APPEAL_REFRESH_BEFORE)))) {
                due.add(e.punishmentId());
            }
        }
        boolean changed = false;
        for (int from = 0; from < due.size(); from += APPEAL_LINKS_PER_REQUEST) {
            List<UUID> chunk = due.subList(from, Math.min(due.size(), from + APPEAL_LINKS_PER_REQUEST));
            chunk.forEach(id -> appealAsked.put(id, now));
            JsonObject body = new JsonObject();
            JsonArray ids = new JsonArray();
            chunk.forEach(id -> ids.add(id.toString()));
            body.add("punishment_ids", ids);
            Transport.Response response;
            try {
                response = transport.appealLinks(body.toString(), Duration.ofSeconds(10));
            } catch (IOException e) {
                error("network error refreshing appeal links: " + e.getClass().getSimpleName());
                return changed;
            }
            if (response.status() != 200) {
                error(response.status() + " " + problemCode(response.body()) + " refreshing appeal links: asking again in an hour");
                return changed;
            }
            changed |= sanctions.updateAppeals(appealLinks(response.body()));
        }
        return changed;
    }

    /** The links of an answer of {@code POST /api/plugin/appeal-links}, by punishment id. */
    static Map<UUID, AppealLink> appealLinks(String body) {
        Map<UUID, AppealLink> out = new LinkedHashMap<>();
        try {
            for (JsonElement e : JsonParser.parseString(body).getAsJsonObject().getAsJsonArray("links")) {
                JsonObject o = e.getAsJsonObject();
                AppealLink link = AppealLink.parse(o);
                if (link != null) {
                    out.put(UUID.fromString(Action.string(o, "punishment_id")), link);
                }
            }
        } catch (RuntimeException e) {
            // Unreadable: no link changes; the next ask is an hour away.
        }
        return out;
    }

    /** Applies one action here: the local lists, then the platform. Never throws. */
    FeedState.Ack apply(Action a) {
        Instant now = clock.instant();
        try {
            if (a.isIssue()) {
                return issue(a, a.punishment(), now);
            }
            if (a.isRevoke()) {
                Sanctions.Entry removed = sanctions.remove(a.revoke().punishmentId());
                FeedState.Ack lifted = through.revoke(a, bridge, config.pluginWriter(), now);
                if (lifted != null) {
                    return lifted;
                }
                if (removed != null) {
                    if (removed.type().equals("mute")) {
                        enforcer.message(removed.player(), "You are no longer muted.");
                    }
                    return new FeedState.Ack(a.id(), Outcome.APPLIED, "lifted", now);
                }
                return new FeedState.Ack(a.id(), Outcome.SKIPPED, "not on this server's lists", now);
            }
            return new FeedState.Ack(a.id(), Outcome.SKIPPED, "unknown action type " + a.type(), now);
        } catch (RuntimeException e) {
            logger.log(Level.WARNING, "action feed: applying " + a.id() + " failed", e);
            return new FeedState.Ack(a.id(), Outcome.FAILED, e.getClass().getSimpleName(), now);
        }
    }

    private FeedState.Ack issue(Action a, Action.Issue p, Instant now) {
        if (!config.inScope(p.scope())) {
            return new FeedState.Ack(a.id(), Outcome.SKIPPED, "scope " + p.scope() + " is not this server's group", now);
        }
        String reason = p.reason() == null || p.reason().isBlank() ? "" : ": " + p.reason();
        switch (p.type()) {
            case "ban", "mute" -> {
                if (p.expiresAt() != null && !p.expiresAt().isAfter(now)) {
                    return new FeedState.Ack(a.id(), Outcome.SKIPPED, "expired", now);
                }
                PunishmentBridge b = throughBridge();
                if (b != null) {
                    return through.issue(a, p, b, config.pluginWriter(), now);
                }
                Sanctions.Entry entry = new Sanctions.Entry(a.id(), p.type(), p.playerUuid(), p.playerName(), p.reason(),
                        p.expiresAt(), a.at() == null ? now : a.at(), p.type().equals("ban") ? p.appeal() : null);
                sanctions.put(entry);
                if (p.type().equals("ban")) {
                    enforcer.kick(p.playerUuid(), banMessage(entry, now));
                } else {
                    enforcer.message(p.playerUuid(), "You have been muted" + until(p.expiresAt()) + reason);
                }
                return new FeedState.Ack(a.id(), Outcome.APPLIED, null, now);
            }
            case "kick", "warning" -> {
                if (a.at() != null && a.at().plus(STALE_AFTER).isBefore(now)) {
                    return new FeedState.Ack(a.id(), Outcome.SKIPPED, "too old to act on", now);
                }
                // A kick is a moment, not state: Warden kicks on every server, whatever apply-through says.
                PunishmentBridge b = throughBridge();
                if (b != null && p.type().equals("warning")) {
                    return through.issue(a, p, b, config.pluginWriter(), now);
                }
                Outcome o = p.type().equals("kick")
                        ? enforcer.kick(p.playerUuid(), "Kicked" + reason)
                        : enforcer.message(p.playerUuid(), "Warning" + reason);
                return new FeedState.Ack(a.id(), o, null, now);
            }
            default -> {
                return new FeedState.Ack(a.id(), Outcome.SKIPPED, "unknown punishment type " + p.type(), now);
            }
        }
    }

    /** The bridge bans, mutes and warnings go through, or null for Warden's own lists. */
    private PunishmentBridge throughBridge() {
        return config.throughPlugin() ? bridge : null;
    }

    /**
     * The message a banned player sees (kicked, or refused at login), with a line naming the appeal
     * form while the ban's link works at {@code now}.
     */
    public static String banMessage(Sanctions.Entry ban, Instant now) {
        AppealLink appeal = ban.appealAt(now);
        return "You are banned from this server" + until(ban.expiresAt())
                + (ban.reason() == null || ban.reason().isBlank() ? "." : ": " + ban.reason())
                + (appeal == null ? "" : "\nAppeal at " + appeal.url());
    }

    /** The message a muted player sees when they chat. */
    public static String muteMessage(Sanctions.Entry mute) {
        return "You are muted" + until(mute.expiresAt())
                + (mute.reason() == null || mute.reason().isBlank() ? "." : ": " + mute.reason());
    }

    private static String until(Instant expiresAt) {
        return expiresAt == null ? "" : " until " + UNTIL.format(expiresAt);
    }

    private static String describe(Action a) {
        if (a.isIssue()) {
            return a.punishment().type() + " of " + a.punishment().playerName();
        }
        if (a.isRevoke()) {
            return "revoke of a " + a.revoke().type();
        }
        return a.type();
    }

    /** Sends the waiting acks, 100 a request; 0 when all are answered, else how long to wait. */
    long sendAcks() throws InterruptedException {
        while (!state.pendingAcks.isEmpty()) {
            List<FeedState.Ack> chunk = List.copyOf(state.pendingAcks.subList(0, Math.min(ACKS_PER_REQUEST, state.pendingAcks.size())));
            Transport.Response response;
            try {
                response = transport.ack(ackBody(chunk), Duration.ofSeconds(10));
            } catch (IOException e) {
                return failure("network error sending acks: " + e.getClass().getSimpleName(), -1);
            }
            int status = response.status();
            boolean dropped = status >= 400 && status < 500 && status != 401 && status != 403 && status != 404
                    && status != 408 && status != 429;
            if (status >= 200 && status < 300 || dropped) {
                if (dropped) {
                    error(status + " " + problemCode(response.body()) + ": the service refused " + chunk.size()
                            + " ack(s); dropped");
                }
                state.pendingAcks.subList(0, chunk.size()).clear();
                try {
                    state.save(sanctions);
                } catch (IOException e) {
                    error("cannot save " + FeedState.FILE_NAME + " (" + e.getMessage() + ")");
                }
                pendingVisible = state.pendingAcks.size();
                continue;
            }
            return refused(response);
        }
        return 0;
    }

    private String ackBody(List<FeedState.Ack> acks) {
        JsonObject o = new JsonObject();
        o.addProperty("server_id", serverId.toString());
        JsonArray results = new JsonArray();
        for (FeedState.Ack a : acks) {
            JsonObject r = new JsonObject();
            r.addProperty("action_id", a.actionId().toString());
            r.addProperty("outcome", a.outcome().wire());
            if (a.detail() != null) {
                r.addProperty("detail", a.detail());
            }
            r.addProperty("at", a.at().toString());
            results.add(r);
        }
        o.add("results", results);
        return o.toString();
    }

    private long refused(Transport.Response response) {
        int status = response.status();
        if (status == 429) {
            connection = "rate limited";
            error("429 rate_limited on the action feed: waiting (Retry-After)");
            return Math.max(response.retryAfterSeconds(), 1) * 1000L;
        }
        if (status == 401 || status == 403) {
            connection = "key refused";
            error(status + " " + problemCode(response.body()) + ": the service refused the plugin key for the action feed");
            return 60_000;
        }
        return failure(status + " " + problemCode(response.body()), response.retryAfterSeconds());
    }

    private long failure(String what, long retryAfterSeconds) {
        long delay = backoff.nextDelayMillis();
        if (retryAfterSeconds > 0) {
            delay = Math.max(delay, retryAfterSeconds * 1000L);
        }
        connection = "unreachable, retrying (the lists hold as of the last sync)";
        error("action feed: " + what + ": retrying in " + Math.max(1, delay / 1000) + " s");
        return delay;
    }

    private void error(String message) {
        if (!message.equals(lastError)) {
            logger.warning(message);
        }
        lastError = message;
        lastErrorAt = clock.instant();
    }

    private static String problemCode(String body) {
        try {
            JsonElement parsed = JsonParser.parseString(body == null ? "" : body);
            if (parsed.isJsonObject() && parsed.getAsJsonObject().has("code")) {
                return parsed.getAsJsonObject().get("code").getAsString();
            }
        } catch (RuntimeException e) {
            // Not problem details.
        }
        return "error";
    }

    public FeedStatus status() {
        Instant now = clock.instant();
        return new FeedStatus(connection, cursorVisible, state.lastAction, state.lastActionAt,
                sanctions.count("ban", now), sanctions.count("mute", now), pendingVisible, config.serverGroup(),
                lastError, lastErrorAt, mode());
    }

    /** How bans, mutes and warnings are applied here, for {@code /warden status}. */
    String mode() {
        PunishmentBridge b = bridge;
        EnforcementConfig c = config;
        if (!c.throughPlugin()) {
            return "Warden's own lists" + (b == null ? ""
                    : "; " + b.displayName() + "'s own punishments revoked on the dashboard are lifted in it by "
                            + (c.pluginWriter() ? "this server (the writer)" : "the writer server"));
        }
        if (b == null) {
            return "Warden's own lists: apply-through is punishment-plugin, but no supported punishment plugin"
                    + " (LiteBans, LibertyBans, AdvancedBan) is enabled";
        }
        return "through " + b.displayName() + ", " + (c.pluginWriter()
                ? "written by this server (punishment-plugin-writer)" : "written by the writer server, not this one");
    }
}
