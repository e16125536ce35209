package dev.warden.plugin.core.enforce;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * What ties the dashboard's punishments to the ones applied through a punishment plugin
 * ({@link PunishmentBridge}): the echoes expected and the links made.
 *
 * <p>Before the feed applies a ban, mute or warning through the plugin it registers an expected
 * echo (source, player, type: good for {@link #ECHO_TTL}). The plugin fires its own event for it;
 * the integration asks {@link #issueSeen} and, for the echo, sends nothing (the dashboard's
 * punishment is in the log already) while the plugin's id is linked to the dashboard's punishment
 * id. A later revoke of that id in the plugin ({@link #revokeSeen}) is sent as the revoke of the
 * dashboard's punishment; a revoke the feed itself made through the plugin is an expected echo
 * and sends nothing. The links are saved in {@code enforcement.json}. Safe from any thread.
 */
public final class BridgeLinks {
    /** How long an expected echo waits for the plugin's event. */
    public static final Duration ECHO_TTL = Duration.ofSeconds(60);
    /** Links kept (the oldest go first). */
    static final int MAX_LINKS = 10_000;

    /**
     * A dashboard punishment applied through a plugin: {@code externalId} is the plugin's id, null
     * until its event named it.
     */
    public record Link(UUID punishmentId, String source, String type, UUID player, String externalId) {}

    /** What the integration does with a revoke it saw: nothing (an echo), or send it (by id when linked). */
    public record Revoke(boolean echo, UUID punishmentId) {
        static final Revoke SEND = new Revoke(false, null);
    }

    private record Expected(UUID punishmentId, Instant until, CompletableFuture<String> externalId) {}

    private final Clock clock;
    private final Map<String, Expected> issues = new HashMap<>();
    private final Map<String, Instant> revokes = new HashMap<>();
    private final LinkedHashMap<UUID, Link> links = new LinkedHashMap<>();
    private boolean changed;

    public BridgeLinks(Clock clock) {
        this.clock = clock;
    }

    private static String key(String source, UUID player, String type) {
        return source + '|' + player + '|' + type;
    }

    /**
     * Expects the plugin's event for an issue about to be applied through it; the future completes
     * with the plugin's id when the event comes.
     */
    public synchronized CompletableFuture<String> expectIssue(String source, UUID player, String type, UUID punishmentId) {
        Expected e = new Expected(punishmentId, clock.instant().plus(ECHO_TTL), new CompletableFuture<>());
        issues.put(key(source, player, type), e);
        link(new Link(punishmentId, source, type, player, null));
        return e.externalId();
    }

    /** The issue was refused: no echo comes and nothing is linked. */
    public synchronized void cancelIssue(String source, UUID player, String type, UUID punishmentId) {
        Expected e = issues.get(key(source, player, type));
        if (e != null && e.punishmentId().equals(punishmentId)) {
            issues.remove(key(source, player, type));
        }
        if (links.remove(punishmentId) != null) {
            changed = true;
        }
    }

    /** Expects the plugin's event for a revoke about to be made through it. */
    public synchronized void expectRevoke(String source, UUID player, String type) {
        revokes.put(key(source, player, type), clock.instant().plus(ECHO_TTL));
    }

    /** Links a dashboard punishment to the plugin's id (the call returned it, or the echo did). */
    public synchronized void link(Link link) {
        Link old = links.remove(link.punishmentId());
        links.put(link.punishmentId(), old != null && link.externalId() == null ? old : link);
        Iterator<UUID> it = links.keySet().iterator();
        while (links.size() > MAX_LINKS && it.hasNext()) {
            it.next();
            it.remove();
        }
        changed = true;
    }

    /**
     * The integration saw its plugin issue a punishment. True when it is the echo of one the feed
     * applied (send nothing: the plugin's id is now linked to the dashboard's punishment).
     */
    public synchronized boolean issueSeen(String source, UUID player, String type, String externalId) {
        Expected e = issues.get(key(source, player, type));
        if (e == null || !e.until().isAfter(clock.instant())) {
            issues.remove(key(source, player, type));
            return false;
        }
        issues.remove(key(source, player, type));
        if (externalId != null) {
            link(new Link(e.punishmentId(), source, type, player, externalId));
        }
        e.externalId().complete(externalId);
        return true;
    }

    /**
     * The integration saw its plugin revoke a punishment: an echo of the feed's own revoke (send
     * nothing), a revoke of a linked dashboard punishment (send it by that punishment's id), or
     * any other (send it by the plugin's id).
     */
    public synchronized Revoke revokeSeen(String source, UUID player, String type, String externalId) {
        Link linked = null;
        for (Link l : links.values()) {
            if (l.source().equals(source) && l.type().equals(type) && externalId != null
                    && externalId.equals(l.externalId())) {
                linked = l;
                break;
            }
        }
        if (linked != null) {
            links.remove(linked.punishmentId());
            changed = true;
        }
        Instant until = revokes.remove(key(source, player, type));
        if (until != null && until.isAfter(clock.instant())) {
            return new Revoke(true, null);
        }
        return linked == null ? Revoke.SEND : new Revoke(false, linked.punishmentId());
    }

    /** The link of a dashboard punishment applied through a plugin, or null. */
    public synchronized Link linkOf(UUID punishmentId) {
        return links.get(punishmentId);
    }

    /** Drops the link of a dashboard punishment (lifted). */
    public synchronized void unlink(UUID punishmentId) {
        if (links.remove(punishmentId) != null) {
            changed = true;
        }
    }

    /** Every link, oldest first (for saving). */
    public synchronized List<Link> links() {
        return new ArrayList<>(links.values());
    }

    /** Replaces the links (on load). */
    public synchronized void replaceAll(List<Link> loaded) {
        links.clear();
        loaded.forEach(l -> links.put(l.punishmentId(), l));
        changed = false;
    }

    /** Whether a link changed since the last call (then the state wants saving). */
    public synchronized boolean takeChanged() {
        boolean was = changed;
        changed = false;
        return was;
    }
}
