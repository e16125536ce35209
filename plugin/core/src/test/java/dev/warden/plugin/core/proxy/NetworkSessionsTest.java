package dev.warden.plugin.core.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.warden.plugin.core.Capture;
import dev.warden.plugin.core.EventQueue;
import dev.warden.plugin.core.Records;
import dev.warden.plugin.core.WardenConfig;
import dev.warden.plugin.core.WardenRecord;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The proxy's stitching: one network session, a join per backend, the quit from the last one. */
class NetworkSessionsTest {
    static final UUID PROXY = UUID.fromString("0190a5f2-0000-7000-8000-0000000000ff");
    static final UUID A = UUID.fromString("0190a5f2-0000-7000-8000-00000000000a");
    static final UUID B = UUID.fromString("0190a5f2-0000-7000-8000-00000000000b");
    static final UUID NOTCH = UUID.fromString("069a79f4-44e9-4726-a5be-fca90e38aaf5");

    @TempDir
    Path dir;

    /** A clock the test moves by hand. */
    static final class HandClock extends Clock {
        Instant now = Instant.parse("2026-11-29T12:00:00Z");

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

    final HandClock clock = new HandClock();
    final EventQueue queue = new EventQueue(1000);
    final Capture capture = new Capture(queue, PROXY, WardenConfig.defaults("http://x", "wdn_plugin_x"), clock);
    final List<String> warnings = new ArrayList<>();
    final Logger logger = Logger.getAnonymousLogger();

    NetworkSessionsTest() {
        logger.setUseParentHandlers(false);
        logger.addHandler(new Handler() {
            @Override
            public void publish(LogRecord r) {
                warnings.add(r.getMessage());
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        });
    }

    NetworkSessions sessions() throws IOException {
        return new NetworkSessions(PROXY, BackendIds.load(dir, logger), capture, Duration.ofSeconds(10), logger);
    }

    List<Records.Session> sent() {
        List<Records.Session> out = new ArrayList<>();
        for (WardenRecord r : queue.drain(1000)) {
            out.add((Records.Session) r);
        }
        return out;
    }

    static void assertSession(Records.Session s, String event, UUID server, Instant at) {
        assertEquals(event, s.event());
        assertEquals(server, s.serverId(), event + " server");
        assertEquals(at, s.at(), event + " time");
        assertEquals(NOTCH, s.playerUuid());
        assertEquals("Notch", s.playerName());
    }

    @Test
    void switchIsAJoinPerBackendAndTheQuitComesFromTheLast() throws IOException {
        NetworkSessions n = sessions();
        n.announced("lobby", A);
        n.announced("survival", B);
        Instant t0 = clock.now;
        n.connected(NOTCH, "Notch", "203.0.113.7", "protocol 767", "lobby");
        clock.now = t0.plusSeconds(60);
        n.connected(NOTCH, "Notch", "203.0.113.7", "protocol 767", "survival");
        assertEquals(B, n.serverOf(NOTCH));
        clock.now = t0.plusSeconds(120);
        n.disconnected(NOTCH, "Notch");
        List<Records.Session> s = sent();
        assertEquals(3, s.size(), s.toString());
        assertSession(s.get(0), "join", A, t0);
        assertEquals("203.0.113.7", s.get(0).ip());
        assertEquals("protocol 767", s.get(0).clientVersion());
        assertSession(s.get(1), "join", B, t0.plusSeconds(60));
        assertEquals("203.0.113.7", s.get(1).ip());
        assertSession(s.get(2), "quit", B, t0.plusSeconds(120));
        assertNull(s.get(2).ip());
        assertEquals(PROXY, n.serverOf(NOTCH), "off the network: the proxy's own id");
        assertTrue(warnings.isEmpty(), warnings.toString());
    }

    @Test
    void aJoinWaitsForItsBackendsAnnouncementAndKeepsItsTime() throws IOException {
        NetworkSessions n = sessions();
        Instant t0 = clock.now;
        n.connected(NOTCH, "Notch", "203.0.113.7", null, "lobby");
        assertTrue(sent().isEmpty(), "no id yet: the join waits");
        assertEquals(1, n.waiting());
        clock.now = t0.plusMillis(300);
        n.announced("lobby", A);
        List<Records.Session> s = sent();
        assertEquals(1, s.size());
        assertSession(s.get(0), "join", A, t0);
        assertEquals(0, n.waiting());
        n.expire();
        assertTrue(sent().isEmpty(), "an announced join is not sent twice");
    }

    @Test
    void aBackendThatNeverAnnouncesGetsAStableFallbackLoggedOnce() throws IOException {
        NetworkSessions n = sessions();
        UUID fallback = BackendIds.fallback(PROXY, "legacy");
        assertEquals(fallback, BackendIds.fallback(PROXY, "legacy"), "stable");
        assertTrue(!fallback.equals(BackendIds.fallback(PROXY, "other")));
        Instant t0 = clock.now;
        n.connected(NOTCH, "Notch", null, null, "legacy");
        clock.now = t0.plusSeconds(9);
        n.expire();
        assertTrue(sent().isEmpty(), "still within the wait");
        clock.now = t0.plusSeconds(10);
        n.expire();
        List<Records.Session> s = sent();
        assertEquals(1, s.size());
        assertSession(s.get(0), "join", fallback, t0);
        n.disconnected(NOTCH, "Notch");
        n.connected(NOTCH, "Notch", null, null, "legacy");
        clock.now = t0.plusSeconds(30);
        n.expire();
        s = sent();
        assertSession(s.get(0), "quit", fallback, t0.plusSeconds(10));
        assertSession(s.get(1), "join", fallback, t0.plusSeconds(10));
        assertEquals(List.of("backend legacy does not run Warden with proxy: true; its sessions are sent with server id "
                + fallback + " (no heartbeat, chat or commands come from it)"), warnings);
    }

    @Test
    void aWaitingJoinLeavesBeforeTheNextSwitchOrQuit() throws IOException {
        NetworkSessions n = sessions();
        n.announced("survival", B);
        Instant t0 = clock.now;
        n.connected(NOTCH, "Notch", null, null, "lobby");
        clock.now = t0.plusSeconds(2);
        n.connected(NOTCH, "Notch", null, null, "survival");
        clock.now = t0.plusSeconds(3);
        n.connected(NOTCH, "Notch", null, null, "lobby");
        clock.now = t0.plusSeconds(4);
        n.disconnected(NOTCH, "Notch");
        UUID lobby = BackendIds.fallback(PROXY, "lobby");
        List<Records.Session> s = sent();
        assertEquals(4, s.size(), s.toString());
        assertSession(s.get(0), "join", lobby, t0);
        assertSession(s.get(1), "join", B, t0.plusSeconds(2));
        assertSession(s.get(2), "join", lobby, t0.plusSeconds(3));
        assertSession(s.get(3), "quit", lobby, t0.plusSeconds(4));
    }

    @Test
    void announcementsSurviveARestartAndAChangedIdIsKept() throws IOException {
        sessions().announced("lobby", A);
        assertTrue(Files.readString(dir.resolve(BackendIds.FILE_NAME)).contains("lobby=" + A));
        NetworkSessions restarted = sessions();
        restarted.connected(NOTCH, "Notch", null, null, "lobby");
        assertSession(sent().get(0), "join", A, clock.now);
        restarted.announced("lobby", B);
        assertEquals(B, BackendIds.load(dir, logger).get("lobby"));
    }

    @Test
    void aQuitWithoutABackendSendsNothing() throws IOException {
        NetworkSessions n = sessions();
        n.disconnected(NOTCH, "Notch");
        assertTrue(sent().isEmpty());
    }
}
