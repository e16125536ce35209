package dev.warden.plugin.core.enforce;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The feed's actions applied through a punishment plugin ({@link PunishmentBridge}). Only the
 * writer server ({@code punishment-plugin-writer: true}) calls the plugin, so a database the
 * network shares gets each action once; every other server acknowledges {@code skipped}, and
 * expects the echo all the same: a plugin that reports the entries it syncs from the shared
 * database on every server would otherwise send the writer's ban from each of them as a new one.
 */
final class BridgeDispatch {
    private static final String SEPARATOR = " - Appeal at ";
    /** The longest ack detail the service takes. */
    private static final int MAX_DETAIL = 512;

    private final BridgeLinks links;
    private final Logger logger;
    volatile Duration echoWait = Duration.ofSeconds(10);

    BridgeDispatch(BridgeLinks links, Logger logger) {
        this.links = links;
        this.logger = logger;
    }

    /** A ban, mute or warning (in scope, not expired, not stale) applied through the plugin. */
    FeedState.Ack issue(Action a, Action.Issue p, PunishmentBridge b, boolean writer, Instant now) {
        if (!writer) {
            links.expectIssue(b.source(), p.playerUuid(), p.type(), a.id());
            return new FeedState.Ack(a.id(), Outcome.SKIPPED, "applied through " + b.displayName()
                    + " by the writer server (punishment-plugin-writer)", now);
        }
        String reason = shownReason(p.reason(), p.type().equals("ban") ? p.appeal() : null, b.maxReasonLength(), now);
        CompletableFuture<String> echo = links.expectIssue(b.source(), p.playerUuid(), p.type(), a.id());
        String id;
        try {
            id = b.issue(p.type(), p.playerUuid(), p.playerName(), reason, p.expiresAt());
        } catch (PunishmentBridge.Refused e) {
            links.cancelIssue(b.source(), p.playerUuid(), p.type(), a.id());
            return new FeedState.Ack(a.id(), Outcome.FAILED, detail(b.displayName() + " refused it: " + e.getMessage()), now);
        } catch (RuntimeException e) {
            links.cancelIssue(b.source(), p.playerUuid(), p.type(), a.id());
            logger.log(Level.WARNING, "action feed: applying " + a.id() + " through " + b.displayName() + " failed", e);
            return new FeedState.Ack(a.id(), Outcome.FAILED, b.displayName() + ": " + e.getClass().getSimpleName(), now);
        }
        if (id != null) {
            links.link(new BridgeLinks.Link(a.id(), b.source(), p.type(), p.playerUuid(), id));
        } else {
            id = awaitEcho(echo);
        }
        return new FeedState.Ack(a.id(), Outcome.APPLIED, "through " + b.displayName()
                + (id == null ? " (its id not seen yet)" : " (id " + id + ")"), now);
    }

    /** The plugin's id from its event, or null when it did not come within {@link #echoWait}. */
    private String awaitEcho(CompletableFuture<String> echo) {
        try {
            return echo.get(echoWait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /**
     * A revoke that is the plugin's: of one of its own punishments ({@code source_plugin} names it),
     * or of a dashboard punishment applied through it. Null when it is not (Warden's lists answer).
     */
    FeedState.Ack revoke(Action a, PunishmentBridge b, boolean writer, Instant now) {
        Action.Revoke r = a.revoke();
        if (b == null) {
            return null;
        }
        BridgeLinks.Link link = links.linkOf(r.punishmentId());
        boolean own = b.source().equalsIgnoreCase(r.sourcePlugin());
        if (!own && (link == null || !link.source().equals(b.source()))) {
            return null;
        }
        if (!writer) {
            java.util.UUID player = own ? r.playerUuid() : link.player();
            if (player != null) {
                links.expectRevoke(b.source(), player, own ? r.type() : link.type());
            }
            links.unlink(r.punishmentId());
            return new FeedState.Ack(a.id(), Outcome.SKIPPED, "lifted in " + b.displayName()
                    + " by the writer server (punishment-plugin-writer)", now);
        }
        String type = own ? r.type() : link.type();
        java.util.UUID player = own ? r.playerUuid() : link.player();
        String externalId = own ? r.externalId() : link.externalId();
        if (type == null || player == null && externalId == null) {
            return new FeedState.Ack(a.id(), Outcome.FAILED, "the revoke names no player nor id to lift", now);
        }
        if (player != null) {
            links.expectRevoke(b.source(), player, type);
        }
        try {
            b.lift(type, player, null, externalId, r.reason());
        } catch (PunishmentBridge.Refused e) {
            return new FeedState.Ack(a.id(), Outcome.FAILED, detail(b.displayName() + " refused it: " + e.getMessage()), now);
        } catch (RuntimeException e) {
            logger.log(Level.WARNING, "action feed: lifting through " + b.displayName() + " failed", e);
            return new FeedState.Ack(a.id(), Outcome.FAILED, b.displayName() + ": " + e.getClass().getSimpleName(), now);
        }
        links.unlink(r.punishmentId());
        return new FeedState.Ack(a.id(), Outcome.APPLIED, "lifted in " + b.displayName(), now);
    }

    /**
     * The reason the plugin shows: {@code "<reason> - Appeal at <url>"} while the ban's link works,
     * cut to {@code max} characters by shortening the reason (the link stays whole, or is left out
     * when it alone does not fit).
     */
    static String shownReason(String reason, AppealLink appeal, int max, Instant now) {
        String base = reason == null || reason.isBlank() ? "" : reason.strip();
        if (appeal != null && appeal.usableAt(now)) {
            String tail = (base.isEmpty() ? "Appeal at " : SEPARATOR) + appeal.url();
            if (tail.length() <= max) {
                int room = max - tail.length();
                return (base.length() > room ? cut(base, room) : base) + tail;
            }
        }
        return base.length() > max ? cut(base, max) : base;
    }

    private static String detail(String s) {
        return s.length() > MAX_DETAIL ? cut(s, MAX_DETAIL) : s;
    }

    /** The first {@code n} characters, not splitting a surrogate pair. */
    private static String cut(String s, int n) {
        int end = n > 0 && Character.isHighSurrogate(s.charAt(n - 1)) ? n - 1 : n;
        return s.substring(0, Math.max(0, end)).strip();
    }
}
