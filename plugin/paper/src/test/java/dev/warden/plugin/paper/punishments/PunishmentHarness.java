package dev.warden.plugin.paper.punishments;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.warden.plugin.core.Capture;
import dev.warden.plugin.core.EventQueue;
import dev.warden.plugin.core.Records;
import dev.warden.plugin.core.UuidV7;
import dev.warden.plugin.core.WardenConfig;
import dev.warden.plugin.core.WardenRecord;
import dev.warden.plugin.core.integration.Integration;
import dev.warden.plugin.core.integration.Integrations;
import java.lang.reflect.Proxy;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.logging.Logger;

/**
 * What the punishment-plugin tests share: a capture over a queue, the integrations list, and the
 * record the integration queued, compared field by field with the one expected.
 */
public final class PunishmentHarness {
    public static final UUID SERVER = UUID.fromString("0190a5f2-0000-7000-8000-000000000001");
    public static final UUID PLAYER = UUID.fromString("069a79f4-44e9-4726-a5be-fca90e38aaf5");
    public static final UUID STAFF = UUID.fromString("853c80ef-3c37-49fd-aa49-938b674adae6");

    public final EventQueue queue = new EventQueue(100);
    public final Capture capture;
    public final Integrations integrations;
    public final List<String> warnings = new ArrayList<>();

    public PunishmentHarness() {
        this(WardenConfig.defaults("http://x", "wdn_plugin_x"));
    }

    public PunishmentHarness(WardenConfig config) {
        capture = new Capture(queue, SERVER, config, Clock.systemUTC());
        Logger logger = Logger.getAnonymousLogger();
        logger.setUseParentHandlers(false);
        logger.addHandler(new java.util.logging.Handler() {
            @Override
            public void publish(java.util.logging.LogRecord r) {
                if (r.getLevel().intValue() >= java.util.logging.Level.WARNING.intValue()) {
                    warnings.add(r.getMessage());
                }
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        });
        integrations = new Integrations(logger);
    }

    /** An integration that is on (its starter registers nothing). */
    public Integration on(String name) {
        return integrations.enable(name, "test", i -> {});
    }

    public List<WardenRecord> records() {
        return queue.drain(100);
    }

    /** Every punishment record queued since the last call (the queue holds nothing else). */
    public List<Records.Punishment> punishments() {
        List<Records.Punishment> out = new ArrayList<>();
        for (WardenRecord r : records()) {
            out.add((Records.Punishment) r);
        }
        return out;
    }

    /** The one punishment record queued since the last call. */
    public Records.Punishment only() {
        List<WardenRecord> records = records();
        assertEquals(1, records.size(), records.toString());
        assertTrue(records.get(0) instanceof Records.Punishment, records.get(0).toString());
        return (Records.Punishment) records.get(0);
    }

    /**
     * Asserts every field of {@code actual}: its id is a UUID v7 made just now, and every other
     * field is {@code expected}'s (whose id, and for a revoke whose issued_at, are taken from
     * {@code actual} once checked).
     */
    public static void assertPunishment(Records.Punishment expected, Records.Punishment actual) {
        assertEquals(7, actual.id().version());
        assertTrue(Duration.between(Instant.ofEpochMilli(UuidV7.epochMillis(actual.id())), Instant.now()).abs()
                .toSeconds() < 5, "the record was made just now");
        Instant issued = expected.issuedAt();
        if ("revoke".equals(actual.action())) {
            assertEquals(UuidV7.epochMillis(actual.id()), actual.issuedAt().toEpochMilli(), "a revoke is dated now");
            issued = actual.issuedAt();
        }
        assertEquals(new Records.Punishment(actual.id(), expected.serverId(), expected.playerUuid(),
                expected.playerName(), expected.type(), expected.action(), expected.reason(), expected.staffUuid(),
                expected.staffName(), issued, expected.expiresAt(), expected.ipBased(), expected.scope(),
                expected.sourcePlugin(), expected.externalId(), expected.punishmentId(), expected.revokeReason()),
                actual);
    }

    /** An issue as expected (id filled in by {@link #assertPunishment}). */
    public static Records.Punishment issue(String name, String type, String reason, UUID staff, String staffName,
            Instant issuedAt, Instant expiresAt, boolean ip, String scope, String source, String externalId) {
        return new Records.Punishment(null, SERVER, PLAYER, name, type, "issue", reason, staff, staffName, issuedAt,
                expiresAt, ip, scope, source, externalId, null, null);
    }

    /** A revoke as expected (id and time filled in by {@link #assertPunishment}). */
    public static Records.Punishment revoke(String name, String type, UUID staff, String staffName,
            String revokeReason, String source, String externalId) {
        return new Records.Punishment(null, SERVER, PLAYER, name, type, "revoke", null, staff, staffName, null, null,
                null, null, source, externalId, null, revokeReason);
    }

    /** An instance of an API interface answering the given methods; any other call throws. */
    @SuppressWarnings("unchecked")
    public static <T> T answering(Class<T> type, Map<String, Object> answers) {
        return (T) Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (proxy, m, args) -> {
            if (answers.containsKey(m.getName())) {
                return answers.get(m.getName());
            }
            return switch (m.getName()) {
                case "hashCode" -> System.identityHashCode(proxy);
                case "equals" -> proxy == args[0];
                case "toString" -> type.getSimpleName();
                default -> throw new UnsupportedOperationException(m.getName());
            };
        });
    }
}
