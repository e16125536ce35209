package dev.warden.plugin.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import dev.warden.plugin.core.integration.FlagCap;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.UUID;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The anti-cheat flag record (contract §5), as Capture makes it, and the cap's window per cycle. */
class AnticheatFlagTest {
    static final String KEY = "wdn_plugin_" + "0123456789abcdef".repeat(4);
    static final Instant AT = Instant.parse("2026-11-29T06:00:00.123456789Z");

    @TempDir
    Path dir;

    FakeService service;

    @AfterEach
    void stop() {
        if (service != null) {
            service.close();
        }
    }

    @Test
    void everyFieldOfTheContractWithPingAndTps() {
        EventQueue queue = new EventQueue(10);
        Capture capture = new Capture(queue, TestSupport.SERVER, WardenConfig.defaults("http://x", KEY),
                Clock.fixed(AT, ZoneOffset.UTC), DeliveryTest.STATS);
        assertTrue(capture.anticheatFlag(TestSupport.PLAYER, "Notch", "BadPackets", "A", 12.5, "yaw=361",
                "grim", true, 87));
        Records.AnticheatFlag flag = (Records.AnticheatFlag) queue.drain(10).get(0);
        assertEquals(RecordKind.ANTICHEAT_FLAG, flag.kind());
        JsonObject o = flag.toJson();
        assertEquals(flag.id().toString(), o.get("id").getAsString());
        assertEquals(AT.toEpochMilli(), flag.id().getMostSignificantBits() >>> 16, "a UUID v7 of the flag's time");
        assertEquals(TestSupport.SERVER.toString(), o.get("server_id").getAsString());
        assertEquals(TestSupport.PLAYER.toString(), o.get("player_uuid").getAsString());
        assertEquals("Notch", o.get("player_name").getAsString());
        assertEquals("BadPackets", o.get("check_name").getAsString());
        assertEquals("A", o.get("check_type").getAsString());
        assertEquals(12.5, o.get("violation_level").getAsDouble());
        assertEquals("yaw=361", o.get("detail").getAsString());
        assertEquals("grim", o.get("source_plugin").getAsString());
        assertTrue(o.get("is_experimental").getAsBoolean());
        assertEquals(87, o.get("ping_ms").getAsInt());
        assertEquals(19.5, o.get("tps").getAsDouble());
        assertEquals("2026-11-29T06:00:00.123456Z", o.get("flagged_at").getAsString());
        assertEquals(13, o.size(), o.toString());
    }

    @Test
    void unknownPingTpsAndTypeAreLeftOutAndValuesKeptInRange() {
        Instant at = Instant.now();
        JsonObject o = new Records.AnticheatFlag(UuidV7.at(at), TestSupport.SERVER, TestSupport.PLAYER, "Notch",
                "Reach", null, -3, null, "vulcan", false, null, null, at).toJson();
        assertFalse(o.has("ping_ms"));
        assertFalse(o.has("tps"));
        assertFalse(o.has("check_type"));
        assertFalse(o.has("detail"));
        assertEquals(0.0, o.get("violation_level").getAsDouble());
        assertFalse(o.get("is_experimental").getAsBoolean());

        JsonObject clamped = new Records.AnticheatFlag(UuidV7.at(at), TestSupport.SERVER, TestSupport.PLAYER, "Notch",
                null, "B", 2e13, "x".repeat(5000), "grim", false, -5, 1e9, at).toJson();
        assertEquals("unknown", clamped.get("check_name").getAsString());
        assertEquals(1e12, clamped.get("violation_level").getAsDouble());
        assertEquals(4096, clamped.get("detail").getAsString().length());
        assertEquals(0, clamped.get("ping_ms").getAsInt());
        assertEquals(1000.0, clamped.get("tps").getAsDouble());
        // No server stats (a platform without a TPS sampler): the flag carries no TPS.
        EventQueue queue = new EventQueue(10);
        new Capture(queue, TestSupport.SERVER, WardenConfig.defaults("http://x", KEY), Clock.systemUTC())
                .anticheatFlag(TestSupport.PLAYER, "Notch", "Fly", "A", 1, null, "vulcan", false, 20);
        assertFalse(queue.drain(1).get(0).toJson().has("tps"));
    }

    /** Each sync cycle of the running core opens a new window; the flags go to their endpoint. */
    @Test
    void theCoresSyncCycleResetsTheCapAndDeliversTheFlags() throws Exception {
        service = new FakeService();
        WardenConfig c = WardenConfig.defaults(service.baseUrl(), KEY);
        WardenCore core = new WardenCore(dir, c, DeliveryTest.STATS, Logger.getAnonymousLogger(),
                new HttpTransport(c.baseUrl(), c.pluginKey(), "test"));
        // Not started: the only cycles are the test's syncNow.
        try {
            FlagCap cap = core.flagCap();
            cap.limit(2);
            UUID player = TestSupport.PLAYER;
            int sent = 0;
            for (int cycle = 0; cycle < 3; cycle++) {
                for (int i = 0; i < 5; i++) {
                    if (cap.admit(player, "Reach")) {
                        core.capture().anticheatFlag(player, "Notch", "Reach", null, i, null, "grim", false, 40);
                        sent++;
                    }
                }
                Status s = core.syncNow().get();
                assertEquals(0, s.queued());
            }
            assertEquals(6, sent, "two per cycle");
            List<JsonObject> flags = service.requests().stream()
                    .filter(r -> r.path().equals("/api/plugin/anticheat-flags"))
                    .flatMap(r -> r.body().asList().stream()).map(e -> e.getAsJsonObject()).toList();
            assertEquals(6, flags.size());
            assertTrue(flags.stream().allMatch(f -> f.get("ping_ms").getAsInt() == 40 && f.get("tps").getAsDouble() == 19.5));
        } finally {
            core.shutdown(2);
        }
    }
}
