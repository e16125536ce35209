package dev.warden.plugin.core.integration;

import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The per-check rate cap on anti-cheat flags: at most {@link #limit()} flags per player and check
 * in one sync cycle, so a flag storm from one player cannot fill the queue and crowd out everyone
 * else's records. What it refuses, the integration counts as dropped.
 *
 * <p>{@link #admit} runs on the anti-cheat's threads (the server thread or its network threads),
 * often: it takes no lock and, for a (player, check) already seen this cycle, allocates nothing.
 * {@link #newCycle} runs on the delivery thread at the start of every sync cycle: it swaps in an
 * empty window, so the counts (and the memory they hold) last one cycle.
 */
public final class FlagCap {
    /** config.yml's default for {@code anticheat.max-flags-per-check}. */
    public static final int DEFAULT_LIMIT = 20;
    public static final int MIN_LIMIT = 1;
    public static final int MAX_LIMIT = 10_000;

    private volatile Map<UUID, Map<String, AtomicInteger>> window = new ConcurrentHashMap<>();
    private volatile int limit;
    private volatile String reason;

    public FlagCap(int limit) {
        limit(limit);
    }

    /** What is wrong with {@code limit} as a setting, or null when it is usable. */
    public static String problem(int limit) {
        if (limit < MIN_LIMIT || limit > MAX_LIMIT) {
            return "anticheat.max-flags-per-check must be in " + MIN_LIMIT + ".." + MAX_LIMIT + " (is " + limit + ")";
        }
        return null;
    }

    /** A new limit (on /warden reload); it applies from the next flag on. */
    public void limit(int limit) {
        if (problem(limit) != null) {
            throw new IllegalArgumentException(problem(limit));
        }
        this.reason = "rate cap: over " + limit + " flags per player and check in one sync cycle";
        this.limit = limit;
    }

    public int limit() {
        return limit;
    }

    /** The reason the integrations give {@link Integration#dropped} for a refused flag. */
    public String reason() {
        return reason;
    }

    /**
     * Counts a flag of {@code player} on {@code check} (the anti-cheat's name for it, with its type
     * when it has one) and says whether it is within this cycle's limit.
     */
    public boolean admit(UUID player, String check) {
        Map<String, AtomicInteger> checks = window.get(player);
        if (checks == null) {
            checks = window.computeIfAbsent(player, p -> new ConcurrentHashMap<>());
        }
        AtomicInteger count = checks.get(check);
        if (count == null) {
            count = checks.computeIfAbsent(check, c -> new AtomicInteger());
        }
        return count.incrementAndGet() <= limit;
    }

    /** Starts a new window: every (player, check) may send {@link #limit()} flags again. */
    public void newCycle() {
        window = new ConcurrentHashMap<>();
    }
}
