package dev.warden.plugin.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.google.gson.JsonObject;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A proxy's heartbeat says role "proxy"; a game server's has no role at all. */
class HeartbeatRoleTest {
    @TempDir
    Path dir;

    FakeService service;
    final TestSupport.CapturedLog log = new TestSupport.CapturedLog("role");

    @BeforeEach
    void start() throws Exception {
        service = new FakeService();
    }

    @AfterEach
    void stop() {
        service.close();
    }

    static ServerStats stats(String role) {
        return new ServerStats() {
            @Override
            public double tps() {
                return 20.0;
            }

            @Override
            public int playerCount() {
                return 42;
            }

            @Override
            public int maxPlayers() {
                return 500;
            }

            @Override
            public String version() {
                return "Velocity 3.4.0";
            }

            @Override
            public String defaultName() {
                return "Velocity";
            }

            @Override
            public String role() {
                return role;
            }
        };
    }

    JsonObject heartbeat(ServerStats stats) throws Exception {
        WardenConfig c = WardenConfig.defaults(service.baseUrl(), DeliveryTest.KEY);
        EventQueue queue = new EventQueue(100);
        Delivery d = new Delivery(queue, new Spool(dir.resolve("spool-" + stats.role()), 64L << 20, log.logger),
                TestSupport.SERVER, stats, c, new HttpTransport(c.baseUrl(), c.pluginKey(), "test"),
                new AtomicLong(1_000_000)::get, log.logger);
        d.tick();
        FakeService.Request r = service.requests().get(service.requests().size() - 1);
        assertEquals("/api/plugin/heartbeat", r.path());
        return r.body().get(0).getAsJsonObject();
    }

    @Test
    void aProxysHeartbeatSaysSoAndAServersSaysNothing() throws Exception {
        JsonObject proxy = heartbeat(stats("proxy"));
        assertEquals("proxy", proxy.get("role").getAsString());
        assertEquals(42, proxy.get("player_count").getAsInt());
        assertEquals(20.0, proxy.get("tps").getAsDouble());
        JsonObject server = heartbeat(stats(null));
        assertFalse(server.has("role"), server.toString());
    }
}
