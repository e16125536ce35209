package dev.warden.plugin.core.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/** The per-player, per-check rate cap on anti-cheat flags. */
class FlagCapTest {
    static final UUID CHEATER = UUID.fromString("069a79f4-44e9-4726-a5be-fca90e38aaf5");
    static final UUID OTHER = UUID.fromString("853c80ef-3c37-49fd-aa49-938b674adae6");

    final Integration integration = new Integrations(Logger.getLogger("test")).enable("Grim", "2.3.73", i -> {});

    /** What an integration does with each flag: admitted ones are sent, the rest dropped. */
    boolean flag(FlagCap cap, UUID player, String check) {
        if (cap.admit(player, check)) {
            integration.sent();
            return true;
        }
        integration.dropped(cap.reason());
        return false;
    }

    @Test
    void aStormFromOnePlayerOnOneCheckDoesNotStopOtherPlayersOrOtherChecks() {
        FlagCap cap = new FlagCap(20);
        int sent = 0;
        for (int i = 0; i < 5_000; i++) {
            sent += flag(cap, CHEATER, "Simulation") ? 1 : 0;
        }
        assertEquals(20, sent);
        // The same player on another check, and another player on the same check, are untouched.
        for (int i = 0; i < 20; i++) {
            assertTrue(flag(cap, CHEATER, "Reach"), "another check of the same player, flag " + i);
            assertTrue(flag(cap, OTHER, "Simulation"), "another player on the same check, flag " + i);
        }
        assertFalse(flag(cap, CHEATER, "Reach"), "each (player, check) has its own limit");
        assertFalse(flag(cap, OTHER, "Simulation"));
        Integration.Snapshot s = integration.snapshot();
        assertEquals(60, s.sent());
        assertEquals(5_000 - 20 + 2, s.dropped());
        assertEquals("    Grim 2.3.73: on, 60 sent, 4982 dropped "
                + "(rate cap: over 20 flags per player and check in one sync cycle)",
                Integrations.statusLines(List.of(s)).get(1));
    }

    @Test
    void theWindowResetsEachCycle() {
        FlagCap cap = new FlagCap(3);
        for (int cycle = 0; cycle < 4; cycle++) {
            for (int i = 0; i < 3; i++) {
                assertTrue(flag(cap, CHEATER, "Timer"), "cycle " + cycle + " flag " + i);
            }
            assertFalse(flag(cap, CHEATER, "Timer"), "cycle " + cycle + ": the fourth is over the cap");
            cap.newCycle();
        }
        assertEquals(12, integration.snapshot().sent());
        assertEquals(4, integration.snapshot().dropped());
    }

    @Test
    void theCountOfDroppedFlagsIsExactUnderConcurrentStorms() throws Exception {
        FlagCap cap = new FlagCap(25);
        int threads = 4;
        int perThread = 20_000;
        AtomicInteger admitted = new AtomicInteger();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> running = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread thread = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                for (int i = 0; i < perThread; i++) {
                    // Netty threads of one cheater racing on one check, and on one check each.
                    if (flag(cap, CHEATER, "BadPacketsA")) {
                        admitted.incrementAndGet();
                    }
                    if (flag(cap, CHEATER, "Check" + (i % 8))) {
                        admitted.incrementAndGet();
                    }
                }
            });
            thread.start();
            running.add(thread);
        }
        go.countDown();
        for (Thread thread : running) {
            thread.join();
        }
        assertEquals(25 + 8 * 25, admitted.get());
        Integration.Snapshot s = integration.snapshot();
        assertEquals(admitted.get(), s.sent());
        assertEquals(2L * threads * perThread - admitted.get(), s.dropped());
    }

    @Test
    void theLimitIsCheckedAndCanChangeOnReload() {
        assertNull(FlagCap.problem(FlagCap.DEFAULT_LIMIT));
        assertEquals("anticheat.max-flags-per-check must be in 1..10000 (is 0)", FlagCap.problem(0));
        assertTrue(FlagCap.problem(10_001) != null);
        assertThrows(IllegalArgumentException.class, () -> new FlagCap(0));
        FlagCap cap = new FlagCap(1);
        assertTrue(cap.admit(CHEATER, "Reach"));
        assertFalse(cap.admit(CHEATER, "Reach"));
        cap.limit(3);
        assertTrue(cap.admit(CHEATER, "Reach"), "a higher limit applies to the window in progress");
        assertEquals(3, cap.limit());
        assertTrue(cap.reason().contains("over 3 flags"));
    }
}
