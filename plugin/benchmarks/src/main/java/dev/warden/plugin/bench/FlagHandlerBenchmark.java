package dev.warden.plugin.bench;

import dev.warden.plugin.core.Capture;
import dev.warden.plugin.core.EventQueue;
import dev.warden.plugin.core.ServerStats;
import dev.warden.plugin.core.WardenConfig;
import dev.warden.plugin.core.integration.FlagCap;
import dev.warden.plugin.core.integration.Integration;
import dev.warden.plugin.core.integration.Integrations;
import java.time.Clock;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What one anti-cheat flag costs the anti-cheat's thread, as the Grim and Vulcan handlers do it:
 * the rate cap's count, then either the record built and queued (a flag within the cap) or the
 * drop counted (a flag of a storm, over the cap).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class FlagHandlerBenchmark {
    private final UUID player = UUID.randomUUID();
    private EventQueue queue;
    private Capture capture;
    private Integration integration;
    private FlagCap open;
    private FlagCap storm;
    private int inWindow;

    @Setup
    public void setUp() {
        queue = new EventQueue(1_000_000);
        ServerStats stats = new ServerStats() {
            @Override
            public double tps() {
                return 19.97;
            }

            @Override
            public int playerCount() {
                return 1;
            }

            @Override
            public int maxPlayers() {
                return 100;
            }

            @Override
            public String version() {
                return "Paper 1.21.4";
            }

            @Override
            public String defaultName() {
                return "bench";
            }
        };
        capture = new Capture(queue, UUID.randomUUID(), WardenConfig.defaults("http://127.0.0.1:8080", "wdn_plugin_x"),
                Clock.systemUTC(), stats);
        integration = new Integrations(Logger.getLogger("bench")).enable("Grim", "bench", i -> {});
        open = new FlagCap(FlagCap.MAX_LIMIT);
        storm = new FlagCap(1);
        storm.admit(player, "Simulation");
    }

    private void flag(FlagCap cap) {
        if (!cap.admit(player, "Simulation")) {
            integration.dropped(cap.reason());
            return;
        }
        capture.anticheatFlag(player, "Notch", "Simulation", null, 12.5, "offset=0.0031", "grim", false, 42);
        integration.sent();
    }

    /** A flag within the cap: counted, built and queued (a new window before the cap is reached, as a cycle would). */
    @Benchmark
    public Object sentFlag() {
        flag(open);
        if (++inWindow == FlagCap.MAX_LIMIT) {
            open.newCycle();
            inWindow = 0;
        }
        return queue.drain(1);
    }

    /** A flag of a storm, over the cap: counted and dropped. */
    @Benchmark
    public Object cappedFlag() {
        flag(storm);
        return integration;
    }
}
