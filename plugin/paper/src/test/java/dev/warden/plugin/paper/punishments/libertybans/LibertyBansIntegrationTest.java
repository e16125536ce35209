package dev.warden.plugin.paper.punishments.libertybans;

import static dev.warden.plugin.paper.punishments.PunishmentHarness.PLAYER;
import static dev.warden.plugin.paper.punishments.PunishmentHarness.STAFF;
import static dev.warden.plugin.paper.punishments.PunishmentHarness.answering;
import static dev.warden.plugin.paper.punishments.PunishmentHarness.assertPunishment;
import static dev.warden.plugin.paper.punishments.PunishmentHarness.issue;
import static dev.warden.plugin.paper.punishments.PunishmentHarness.revoke;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.warden.plugin.core.integration.Integration;
import dev.warden.plugin.core.integration.Integrations;
import dev.warden.plugin.paper.punishments.PunishmentHarness;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import space.arim.libertybans.api.AddressVictim;
import space.arim.libertybans.api.CompositeVictim;
import space.arim.libertybans.api.ConsoleOperator;
import space.arim.libertybans.api.NetworkAddress;
import space.arim.libertybans.api.Operator;
import space.arim.libertybans.api.PlayerOperator;
import space.arim.libertybans.api.PlayerVictim;
import space.arim.libertybans.api.PunishmentType;
import space.arim.libertybans.api.Victim;
import space.arim.libertybans.api.event.PostPardonEvent;
import space.arim.libertybans.api.event.PostPunishEvent;
import space.arim.libertybans.api.punish.Punishment;
import space.arim.libertybans.api.scope.ServerScope;
import space.arim.omnibus.events.EventConsumer;
import org.junit.jupiter.api.Test;

/** LibertyBans' PostPunishEvent and PostPardonEvent, as its event bus hands them over, and the records. */
class LibertyBansIntegrationTest {
    static final Instant START = Instant.parse("2026-11-01T10:00:00Z");
    static final Instant END = Instant.parse("2099-01-01T00:00:00Z");
    static final ServerScope GLOBAL = answering(ServerScope.class, Map.of());
    static final ServerScope LOBBY = answering(ServerScope.class, Map.of());
    /** What enable() builds from the scope manager and the formatter. */
    static final Function<ServerScope, String> SCOPES = s -> s == GLOBAL ? "global" : s == LOBBY ? "lobby" : null;

    final PunishmentHarness h = new PunishmentHarness();
    final Integration integration = h.on("LibertyBans");
    final EventConsumer<PostPunishEvent> punish = LibertyBansIntegration.onPunish(h.capture, integration, SCOPES);
    final EventConsumer<PostPardonEvent> pardon = LibertyBansIntegration.onPardon(h.capture, integration);

    static Punishment punishment(long id, PunishmentType type, Victim victim, Operator operator, String reason,
            Instant end, ServerScope scope) {
        Map<String, Object> answers = new HashMap<>();
        answers.put("getIdentifier", id);
        answers.put("getType", type);
        answers.put("getVictim", victim);
        answers.put("getOperator", operator);
        answers.put("getReason", reason);
        answers.put("getStartDate", START);
        answers.put("getEndDate", end);
        answers.put("getScope", scope);
        return answering(Punishment.class, answers);
    }

    static PostPunishEvent punished(Punishment p) {
        return answering(PostPunishEvent.class, Map.of("getPunishment", p));
    }

    static PostPardonEvent pardoned(Punishment p, Operator by) {
        return answering(PostPardonEvent.class, Map.of("getPunishment", p, "getOperator", by));
    }

    static NetworkAddress address() {
        return NetworkAddress.of(new byte[] {(byte) 203, 0, 113, 7});
    }

    @Test
    void temporaryBanByStaffEverywhere() {
        punish.accept(punished(punishment(41, PunishmentType.BAN, PlayerVictim.of(PLAYER), PlayerOperator.of(STAFF),
                "Griefing", END, GLOBAL)));
        assertPunishment(issue(null, "ban", "Griefing", STAFF, null, START, END, false, "global", "libertybans", "41"),
                h.only());
        assertEquals(1, integration.snapshot().sent());
    }

    @Test
    void permanentIpBanOfAPlayerByTheConsoleOnOneServer() {
        punish.accept(punished(punishment(42, PunishmentType.BAN, CompositeVictim.of(PLAYER, address()),
                ConsoleOperator.INSTANCE, "Alt farm", Punishment.PERMANENT_END_DATE, LOBBY)));
        assertPunishment(issue(null, "ban", "Alt farm", null, "Console", START, null, true, "lobby", "libertybans",
                "42"), h.only());
    }

    @Test
    void muteWarningAndKick() {
        punish.accept(punished(punishment(43, PunishmentType.MUTE, PlayerVictim.of(PLAYER), PlayerOperator.of(STAFF),
                "Spam", END, GLOBAL)));
        assertPunishment(issue(null, "mute", "Spam", STAFF, null, START, END, false, "global", "libertybans", "43"),
                h.only());
        punish.accept(punished(punishment(44, PunishmentType.WARN, PlayerVictim.of(PLAYER), PlayerOperator.of(STAFF),
                "Language", Punishment.PERMANENT_END_DATE, GLOBAL)));
        assertPunishment(issue(null, "warning", "Language", STAFF, null, START, null, false, "global", "libertybans",
                "44"), h.only());
        punish.accept(punished(punishment(45, PunishmentType.KICK, PlayerVictim.of(PLAYER), ConsoleOperator.INSTANCE,
                "AFK", Punishment.PERMANENT_END_DATE, GLOBAL)));
        assertPunishment(issue(null, "kick", "AFK", null, "Console", START, null, false, "global", "libertybans", "45"),
                h.only());
        assertEquals(3, integration.snapshot().sent());
    }

    @Test
    void anAddressAloneIsCountedNotSent() {
        punish.accept(punished(punishment(46, PunishmentType.BAN, AddressVictim.of(address()),
                ConsoleOperator.INSTANCE, "Proxy", Punishment.PERMANENT_END_DATE, GLOBAL)));
        punish.accept(punished(punishment(47, PunishmentType.BAN,
                CompositeVictim.of(CompositeVictim.WILDCARD_UUID, address()), ConsoleOperator.INSTANCE, "Proxy",
                Punishment.PERMANENT_END_DATE, GLOBAL)));
        assertTrue(h.records().isEmpty());
        assertEquals(2, integration.snapshot().dropped());
        assertEquals("an IP punishment that names no player", integration.snapshot().droppedBecause());
    }

    @Test
    void pardonsNameThePunishmentAndWhoPardoned() {
        Punishment ban = punishment(41, PunishmentType.BAN, PlayerVictim.of(PLAYER), PlayerOperator.of(STAFF),
                "Griefing", END, GLOBAL);
        java.util.UUID admin = java.util.UUID.fromString("4566e69f-c907-48ee-8d71-d7ba5aa00d20");
        pardon.accept(pardoned(ban, PlayerOperator.of(admin)));
        assertPunishment(revoke(null, "ban", admin, null, null, "libertybans", "41"), h.only());
        Punishment mute = punishment(43, PunishmentType.MUTE, CompositeVictim.of(PLAYER, address()),
                PlayerOperator.of(STAFF), "Spam", END, GLOBAL);
        pardon.accept(pardoned(mute, ConsoleOperator.INSTANCE));
        assertPunishment(revoke(null, "mute", null, "Console", null, "libertybans", "43"), h.only());
        Punishment warn = punishment(44, PunishmentType.WARN, PlayerVictim.of(PLAYER), PlayerOperator.of(STAFF),
                "Language", Punishment.PERMANENT_END_DATE, GLOBAL);
        pardon.accept(pardoned(warn, PlayerOperator.of(STAFF)));
        assertPunishment(revoke(null, "warning", STAFF, null, null, "libertybans", "44"), h.only());
        assertEquals(3, integration.snapshot().sent());
    }

    @Test
    void aFailingHandlerDisablesLibertyBansAlone() {
        Integration other = h.on("AdvancedBan");
        // An API that changed under the integration: the punishment lacks a method it calls.
        Punishment changed = answering(Punishment.class, Map.of("getVictim", PlayerVictim.of(PLAYER)));
        punish.accept(punished(changed));
        assertFalse(integration.active());
        punish.accept(punished(punishment(48, PunishmentType.BAN, PlayerVictim.of(PLAYER), ConsoleOperator.INSTANCE,
                "x", END, GLOBAL)));
        assertTrue(h.records().isEmpty(), "a failed integration sends nothing more");
        assertEquals(1, h.warnings.size(), "logged once: " + h.warnings);
        assertTrue(other.active());
        List<String> status = Integrations.statusLines(h.integrations.snapshot());
        assertTrue(status.get(1).startsWith("    LibertyBans test: failed (a punishment issued: "), status.toString());
        assertEquals("    AdvancedBan test: on, 0 sent", status.get(2));
    }

    @Test
    void withoutLibertyBansLoadedTheStartFailsAndIsListed() {
        Integration failed = h.integrations.enable("LibertyBans", "1.1.1",
                i -> LibertyBansIntegration.enable(h.capture, i));
        assertFalse(failed.active());
        assertTrue(failed.snapshot().problem().startsWith("starting: "), failed.snapshot().problem());
        assertTrue(integration.active());
    }
}
