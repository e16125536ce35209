package dev.warden.plugin.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The requests per minute one server sends with 100 players chatting, at several sync intervals:
 * one simulated minute on a clock the test moves, against a real HTTP server. Each player says
 * something every 10 s and runs a command every 30 s (600 chat lines and 200 commands a minute),
 * and 10 players join and 10 quit. Printed as a table (the docs quote it) and bounded: one request
 * per endpoint with something to send per cycle.
 */
class RequestRateTest {
    @TempDir
    Path dir;

    @Test
    void requestsPerMinuteAtAHundredPlayersChatting() throws Exception {
        StringBuilder table = new StringBuilder("sync interval | requests/minute | records/minute\n");
        for (int interval : List.of(1, 5, 15, 30, 60)) {
            int[] r = simulate(interval, dir.resolve("i" + interval));
            table.append(String.format("%13d | %15d | %14d%n", interval, r[0], r[1]));
            int cycles = 60 / interval;
            // heartbeat + chat every cycle; sessions in at most every cycle.
            assertTrue(r[0] <= 3 * cycles, interval + " s: " + r[0] + " requests");
            assertEquals(1 * cycles + 600 + 200 + 20, r[1], "every record sent once");
        }
        System.out.println("[requests per minute, 100 players chatting]\n" + table);
    }

    private int[] simulate(int intervalSeconds, Path data) throws Exception {
        try (FakeService service = new FakeService()) {
            AtomicLong millis = new AtomicLong(1_700_000_000_000L);
            EventQueue queue = new EventQueue(100_000);
            WardenConfig d = WardenConfig.defaults(service.baseUrl(), "wdn_plugin_x");
            WardenConfig c = new WardenConfig(d.baseUrl(), d.pluginKey(), intervalSeconds, "bench", 100_000, 64, 8, 5, 10,
                    300, true, true, true, true, true, true, "global", d.redactCommands(), List.of());
            Clock clock = new Clock() {
                @Override
                public java.time.ZoneId getZone() {
                    return ZoneOffset.UTC;
                }

                @Override
                public Clock withZone(java.time.ZoneId zone) {
                    return this;
                }

                @Override
                public Instant instant() {
                    return Instant.ofEpochMilli(millis.get());
                }
            };
            Capture capture = new Capture(queue, TestSupport.SERVER, c, clock);
            TestSupport.CapturedLog log = new TestSupport.CapturedLog("rate");
            Delivery delivery = new Delivery(queue, new Spool(data, 64L << 20, log.logger), TestSupport.SERVER,
                    DeliveryTest.STATS, c, new HttpTransport(c.baseUrl(), c.pluginKey(), "rate"), millis::get, log.logger);
            UUID[] players = new UUID[100];
            for (int p = 0; p < players.length; p++) {
                players[p] = UuidV7.at(p);
            }
            // The first cycle at t=0 (nothing yet), then 60 s of traffic, one tick every 500 ms.
            delivery.tick();
            int before = service.requests().size();
            int recordsBefore = service.ids().size();
            for (int halfSecond = 1; halfSecond <= 120; halfSecond++) {
                millis.addAndGet(500);
                long second = halfSecond / 2;
                if (halfSecond % 2 == 0) {
                    for (int p = 0; p < players.length; p++) {
                        if ((second + p) % 10 == 0) {
                            capture.chat(players[p], "player" + p, "message at " + second);
                        }
                        if ((second + p) % 30 == 0) {
                            capture.command(players[p], "player" + p, "/home");
                        }
                    }
                    if (second % 6 == 0) {
                        capture.join(UuidV7.at(second), "newcomer", "198.51.100.1", null);
                        capture.quit(players[(int) second], "player" + second);
                    }
                }
                if (halfSecond == 120) {
                    millis.addAndGet(1); // the cycle at 60 s carries the last second's records
                }
                delivery.tick();
            }
            return new int[] {service.requests().size() - before, service.ids().size() - recordsBefore};
        }
    }
}
