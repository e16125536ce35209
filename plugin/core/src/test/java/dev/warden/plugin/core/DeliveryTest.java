package dev.warden.plugin.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The delivery loop against a real HTTP server, on a clock the test moves (no sleeps). */
class DeliveryTest {
    static final String KEY = "wdn_plugin_" + "0123456789abcdef".repeat(4);

    @TempDir
    Path dir;

    FakeService service;
    final AtomicLong clock = new AtomicLong(1_000_000);
    final TestSupport.CapturedLog log = new TestSupport.CapturedLog("delivery");
    EventQueue queue;
    Capture capture;

    static final ServerStats STATS = new ServerStats() {
        @Override
        public double tps() {
            return 19.5;
        }

        @Override
        public int playerCount() {
            return 3;
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
            return "lobby";
        }
    };

    @BeforeEach
    void start() throws Exception {
        service = new FakeService();
        queue = new EventQueue(10_000);
    }

    @AfterEach
    void stop() {
        service.close();
    }

    WardenConfig config() {
        return WardenConfig.defaults(service.baseUrl(), KEY);
    }

    Delivery delivery() throws Exception {
        WardenConfig c = config();
        capture = new Capture(queue, TestSupport.SERVER, c, java.time.Clock.systemUTC());
        return new Delivery(queue, new Spool(dir.resolve("spool"), 64L << 20, log.logger), TestSupport.SERVER, STATS, c,
                new HttpTransport(c.baseUrl(), c.pluginKey(), "test"), clock::get, log.logger);
    }

    void someTraffic(int chats) {
        for (int i = 0; i < chats; i++) {
            capture.chat(TestSupport.PLAYER, "Notch", "hello " + i);
        }
        capture.join(TestSupport.PLAYER, "Notch", "203.0.113.7", "protocol 769");
    }

    @Test
    void oneGzipRequestPerEndpointPerCycle() throws Exception {
        Delivery d = delivery();
        someTraffic(5);
        d.tick();
        assertEquals(List.of("/api/plugin/heartbeat", "/api/plugin/chat", "/api/plugin/sessions"), service.paths());
        FakeService.Request chat = service.requests().get(1);
        assertEquals("Bearer " + KEY, chat.header("Authorization"));
        assertEquals("gzip", chat.header("Content-Encoding"));
        assertEquals("application/json", chat.header("Content-Type"));
        assertEquals(5, chat.body().size());
        var hb = service.requests().get(0).body().get(0).getAsJsonObject();
        assertEquals(TestSupport.SERVER.toString(), hb.get("server_id").getAsString());
        assertEquals(19.5, hb.get("tps").getAsDouble());
        assertEquals(3, hb.get("player_count").getAsInt());
        assertTrue(hb.get("online").getAsBoolean());
        assertEquals(0, d.status().spoolBatches());

        // Between cycles: nothing is sent; the next cycle sends its heartbeat and new records.
        capture.chat(TestSupport.PLAYER, "Notch", "later");
        clock.addAndGet(5_000);
        d.tick();
        assertEquals(3, service.requests().size());
        clock.addAndGet(10_000);
        d.tick();
        assertEquals(5, service.requests().size());
        d.refreshCounts();
        assertEquals("connected", d.status().connection());
        assertEquals(9, d.status().sentRecords());
    }

    @Test
    void rateLimitedWaitsForRetryAfter() throws Exception {
        Delivery d = delivery();
        service.script.add(new FakeService.Answer(429, "3",
                "{\"type\":\"https://warden.dev/errors/rate-limited\",\"code\":\"rate_limited\",\"status\":429}"));
        someTraffic(2);
        d.tick();
        assertEquals(1, service.requests().size());
        assertEquals("rate limited", d.status().connection());
        clock.addAndGet(2_900);
        d.tick();
        assertEquals(1, service.requests().size(), "nothing before Retry-After");
        clock.addAndGet(400); // 3.3 s: past Retry-After and its jitter (< 250 ms)
        d.tick();
        assertEquals(4, service.requests().size());
        Set<String> ids = new HashSet<>(service.ids());
        // The heartbeat was sent twice (refused, then accepted): same id both times.
        assertEquals(4, ids.size());
        assertEquals(service.requests().get(0).body(), service.requests().get(1).body());
    }

    @Test
    void outageBacksOffKeepsEverythingAndSurvivesARestart() throws Exception {
        Delivery d = delivery();
        service.script.add(new FakeService.Answer(503, "2", "{\"code\":\"unavailable\",\"status\":503}"));
        someTraffic(3);
        d.tick();
        assertEquals(1, service.requests().size());
        d.refreshCounts();
        assertEquals(3, d.status().spoolBatches());
        assertNotNull(d.status().nextAttempt());
        assertTrue(log.all().contains("503 unavailable"), log.all());

        // The service goes away entirely: connection refused, and the wait grows.
        String url = service.baseUrl();
        service.close();
        clock.addAndGet(2_500);
        d.tick();
        assertTrue(d.status().lastError().startsWith("network error"), d.status().lastError());
        capture.chat(TestSupport.PLAYER, "Notch", "during the outage");
        clock.addAndGet(15_000);
        d.tick();

        // A restart: a new delivery on the same spool, and the service is back on another port.
        service = new FakeService();
        WardenConfig c = WardenConfig.defaults(service.baseUrl(), KEY);
        Delivery after = new Delivery(queue, new Spool(dir.resolve("spool"), 64L << 20, log.logger), TestSupport.SERVER,
                STATS, c, new HttpTransport(c.baseUrl(), KEY, "test"), clock::get, log.logger);
        after.tick();
        after.refreshCounts();
        assertEquals(0, after.status().spoolBatches());
        List<String> ids = service.ids();
        assertEquals(ids.size(), new HashSet<>(ids).size(), "each record once");
        List<String> messages = service.requests().stream().filter(r -> r.path().equals("/api/plugin/chat"))
                .flatMap(r -> r.body().asList().stream())
                .map(e -> e.getAsJsonObject().get("message").getAsString()).collect(Collectors.toList());
        assertEquals(List.of("hello 0", "hello 1", "hello 2", "during the outage"), messages);
        assertFalse(url.isEmpty());
    }

    @Test
    void refusedBatchesAreDroppedAndCounted() throws Exception {
        Delivery d = delivery();
        service.script.add(new FakeService.Answer(202, null,
                "{\"accepted\":0,\"duplicates\":0,\"rejected\":[]}"));
        service.script.add(new FakeService.Answer(422, null,
                "{\"code\":\"validation_failed\",\"status\":422,\"rejected\":[]}"));
        someTraffic(2);
        d.tick();
        d.refreshCounts();
        assertEquals(3, service.requests().size(), "a refused batch does not stop the others");
        assertEquals(0, d.status().spoolBatches());
        assertEquals(2, d.status().refusedRecords());
        assertTrue(d.status().lastError().contains("validation_failed"));
    }

    @Test
    void refusedKeyKeepsEverythingAndIsNeverLogged() throws Exception {
        Delivery d = delivery();
        service.script.add(new FakeService.Answer(401, null,
                "{\"code\":\"invalid_credentials\",\"status\":401}"));
        someTraffic(1);
        d.tick();
        d.refreshCounts();
        assertEquals("key refused", d.status().connection());
        assertEquals(3, d.status().spoolBatches());
        clock.addAndGet(59_000);
        d.tick();
        assertEquals(1, service.requests().size(), "a refused key is retried after a minute");
        clock.addAndGet(2_000);
        d.tick();
        d.refreshCounts();
        assertEquals(0, d.status().spoolBatches());
        assertFalse(log.all().contains(KEY.substring(11)), log.all());
        assertFalse(d.status().lastError().contains(KEY.substring(11)));
    }

    @Test
    void cleanShutdownSendsAnOfflineHeartbeatWithinItsBound() throws Exception {
        WardenConfig c = config();
        WardenCore core = new WardenCore(dir, c, STATS, log.logger,
                new HttpTransport(c.baseUrl(), c.pluginKey(), "test"));
        core.capture().chat(TestSupport.PLAYER, "Notch", "bye");
        long started = System.nanoTime();
        core.shutdown(5);
        assertTrue((System.nanoTime() - started) / 1e9 < 6.5);
        var last = service.requests().stream().filter(r -> r.path().equals("/api/plugin/heartbeat"))
                .reduce((a, b) -> b).orElseThrow().body().get(0).getAsJsonObject();
        assertFalse(last.get("online").getAsBoolean());
        assertTrue(service.paths().contains("/api/plugin/chat"));
        assertEquals(0, core.status().spoolBatches());
    }

    @Test
    void shutdownDuringAnOutageKeepsTheRecordsForTheNextStart() throws Exception {
        WardenConfig c = WardenConfig.defaults("http://127.0.0.1:9", KEY); // discard port: refused
        WardenCore core = new WardenCore(dir, c, STATS, log.logger,
                new HttpTransport(c.baseUrl(), c.pluginKey(), "test"));
        core.capture().chat(TestSupport.PLAYER, "Notch", "kept");
        long started = System.nanoTime();
        core.shutdown(2);
        assertTrue((System.nanoTime() - started) / 1e9 < 4.5);
        WardenCore next = new WardenCore(dir, config(), STATS, log.logger,
                new HttpTransport(service.baseUrl(), KEY, "test"));
        assertEquals(core.serverId(), next.serverId());
        next.shutdown(5);
        List<String> messages = service.requests().stream().filter(r -> r.path().equals("/api/plugin/chat"))
                .flatMap(r -> r.body().asList().stream())
                .map(e -> e.getAsJsonObject().get("message").getAsString()).toList();
        assertEquals(List.of("kept"), messages);
    }

    @Test
    void afterAnOutageTheBacklogGoesOutInFewRequests() throws Exception {
        Delivery d = delivery();
        String url = service.baseUrl();
        service.close(); // down from the start
        for (int cycle = 0; cycle < 40; cycle++) {
            for (int i = 0; i < 30; i++) {
                capture.chat(TestSupport.PLAYER, "Notch", "c" + cycle + " m" + i);
            }
            d.tick();
            clock.addAndGet(15_000);
        }
        d.refreshCounts();
        assertEquals(80, d.status().spoolBatches(), "40 heartbeats and 40 chat batches");

        service = new FakeService();
        WardenConfig c = WardenConfig.defaults(service.baseUrl(), KEY);
        d.configure(c, new HttpTransport(c.baseUrl(), KEY, "test"));
        d.tick();
        d.refreshCounts();
        assertEquals(0, d.status().spoolBatches());
        // 41 heartbeats in one request; 1,200 chat lines in two: whole batches of 30, up to 1,000.
        assertEquals(List.of("/api/plugin/heartbeat", "/api/plugin/chat", "/api/plugin/chat"), service.paths());
        assertEquals(List.of(41, 990, 210), service.requests().stream().map(r -> r.body().size()).toList());
        List<String> messages = service.requests().stream().filter(r -> r.path().equals("/api/plugin/chat"))
                .flatMap(r -> r.body().asList().stream())
                .map(e -> e.getAsJsonObject().get("message").getAsString()).toList();
        assertEquals("c0 m0", messages.get(0));
        assertEquals("c39 m29", messages.get(messages.size() - 1));
        assertEquals(1200, new HashSet<>(messages).size());
        assertFalse(url.isEmpty());
    }
}
