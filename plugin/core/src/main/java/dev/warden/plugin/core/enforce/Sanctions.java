package dev.warden.plugin.core.enforce;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The local ban and mute lists, replicated from the feed. Read on any thread (a login thread, a chat
 * thread) without locking: every change publishes a new immutable snapshot. Changed only by the
 * feed's thread (and on load). Entries past their expiry are ignored and pruned.
 */
public final class Sanctions {
    /**
     * One active ban or mute. {@code expiresAt} null = permanent; {@code appeal} (a ban's link to the
     * appeal form) null when none is known.
     */
    public record Entry(UUID punishmentId, String type, UUID player, String playerName, String reason,
            Instant expiresAt, Instant issuedAt, AppealLink appeal) {
        /** An entry with no appeal link. */
        public Entry(UUID punishmentId, String type, UUID player, String playerName, String reason,
                Instant expiresAt, Instant issuedAt) {
            this(punishmentId, type, player, playerName, reason, expiresAt, issuedAt, null);
        }

        public boolean activeAt(Instant now) {
            return expiresAt == null || expiresAt.isAfter(now);
        }

        /** The appeal link while it works at {@code now}, else null. */
        public AppealLink appealAt(Instant now) {
            return appeal != null && appeal.usableAt(now) ? appeal : null;
        }

        /** This entry with {@code link} as its appeal link. */
        public Entry withAppeal(AppealLink link) {
            return new Entry(punishmentId, type, player, playerName, reason, expiresAt, issuedAt, link);
        }
    }

    private volatile Map<UUID, Entry> byId = Map.of();
    private volatile Map<UUID, List<Entry>> byPlayer = Map.of();

    /** The player's active ban, or null. */
    public Entry ban(UUID player, Instant now) {
        return find(player, "ban", now);
    }

    /** The player's active mute, or null. */
    public Entry mute(UUID player, Instant now) {
        return find(player, "mute", now);
    }

    private Entry find(UUID player, String type, Instant now) {
        Entry found = null;
        for (Entry e : byPlayer.getOrDefault(player, List.of())) {
            // The longest-lasting one answers (a permanent one above all).
            if (e.type().equals(type) && e.activeAt(now)
                    && (found == null || found.expiresAt() != null && (e.expiresAt() == null || e.expiresAt().isAfter(found.expiresAt())))) {
                found = e;
            }
        }
        return found;
    }

    /** Adds (or replaces) an entry. */
    public synchronized void put(Entry e) {
        Map<UUID, Entry> next = new HashMap<>(byId);
        next.put(e.punishmentId(), e);
        publish(next);
    }

    /** Removes the entry for this punishment; the removed one, or null when it was not here. */
    public synchronized Entry remove(UUID punishmentId) {
        Map<UUID, Entry> next = new HashMap<>(byId);
        Entry removed = next.remove(punishmentId);
        if (removed != null) {
            publish(next);
        }
        return removed;
    }

    /**
     * Sets the appeal links of the entries still here (by punishment id); true when one changed. An
     * entry revoked meanwhile stays gone.
     */
    public synchronized boolean updateAppeals(Map<UUID, AppealLink> links) {
        Map<UUID, Entry> next = new HashMap<>(byId);
        boolean changed = false;
        for (Map.Entry<UUID, AppealLink> link : links.entrySet()) {
            Entry e = next.get(link.getKey());
            if (e != null && !link.getValue().equals(e.appeal())) {
                next.put(e.punishmentId(), e.withAppeal(link.getValue()));
                changed = true;
            }
        }
        if (changed) {
            publish(next);
        }
        return changed;
    }

    /** Drops the entries that expired by {@code now}. */
    public synchronized void prune(Instant now) {
        Map<UUID, Entry> next = new HashMap<>(byId);
        if (next.values().removeIf(e -> !e.activeAt(now))) {
            publish(next);
        }
    }

    public synchronized void replaceAll(Collection<Entry> entries) {
        Map<UUID, Entry> next = new HashMap<>();
        entries.forEach(e -> next.put(e.punishmentId(), e));
        publish(next);
    }

    /** Every entry (active or not yet pruned). */
    public List<Entry> entries() {
        return List.copyOf(byId.values());
    }

    /** Active entries of a type ("ban" or "mute") at {@code now}. */
    public int count(String type, Instant now) {
        int n = 0;
        for (Entry e : byId.values()) {
            if (e.type().equals(type) && e.activeAt(now)) {
                n++;
            }
        }
        return n;
    }

    private void publish(Map<UUID, Entry> next) {
        Map<UUID, List<Entry>> players = new HashMap<>();
        for (Entry e : next.values()) {
            players.computeIfAbsent(e.player(), k -> new ArrayList<>()).add(e);
        }
        players.replaceAll((k, v) -> List.copyOf(v));
        byPlayer = Map.copyOf(players);
        byId = Map.copyOf(next);
    }
}
