package dev.warden.plugin.paper.punishments.advancedban;

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
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import me.leoko.advancedban.bukkit.event.PunishmentEvent;
import me.leoko.advancedban.bukkit.event.RevokePunishmentEvent;
import me.leoko.advancedban.utils.Punishment;
import me.leoko.advancedban.utils.PunishmentType;
import org.bukkit.Server;
import org.bukkit.entity.Player;
import org.bukkit.event.EventHandler;
import org.bukkit.event.EventPriority;
import org.bukkit.event.Listener;
import org.bukkit.plugin.Plugin;
import org.bukkit.plugin.PluginManager;
import org.junit.jupiter.api.Test;

/** AdvancedBan's Bukkit events, as the server hands them to the listener, and the records. */
class AdvancedBanIntegrationTest {
    static final Instant START = Instant.parse("2026-11-01T10:00:00Z");
    static final Instant END = Instant.parse("2099-01-01T00:00:00Z");
    /** AdvancedBan stores UUIDs without dashes. */
    static final String STORED = PLAYER.toString().replace("-", "");
    /** Who is online, by name: the moderator and the player. */
    static final Map<String, UUID> ONLINE = Map.of("moderator", STAFF, "notch", PLAYER);

    final PunishmentHarness h = new PunishmentHarness();
    final Integration integration = h.on("AdvancedBan");
    final AdvancedBanIntegration listener =
            new AdvancedBanIntegration(h.capture, integration, name -> ONLINE.get(name.toLowerCase()));

    static Punishment punishment(String uuid, String reason, String operator, PunishmentType type, long end, int id) {
        return new Punishment("Notch", uuid, reason, operator, type, START.toEpochMilli(), end, "", id);
    }

    @Test
    void theHandlersListenAtMonitor() throws Exception {
        for (String name : List.of("onPunishment", "onRevoke")) {
            Method m = AdvancedBanIntegration.class.getMethod(name,
                    name.equals("onPunishment") ? PunishmentEvent.class : RevokePunishmentEvent.class);
            assertEquals(EventPriority.MONITOR, m.getAnnotation(EventHandler.class).priority());
        }
    }

    @Test
    void temporaryBanByStaff() {
        listener.onPunishment(new PunishmentEvent(punishment(STORED, "Griefing", "Moderator", PunishmentType.TEMP_BAN,
                END.toEpochMilli(), 7)));
        assertPunishment(issue("Notch", "ban", "Griefing", STAFF, "Moderator", START, END, false, null, "advancedban",
                "7"), h.only());
        assertEquals(1, integration.snapshot().sent());
    }

    @Test
    void permanentBanAndIpBanByTheConsole() {
        listener.onPunishment(new PunishmentEvent(punishment(STORED, "Cheating", "CONSOLE", PunishmentType.BAN, -1, 8)));
        assertPunishment(issue("Notch", "ban", "Cheating", null, "CONSOLE", START, null, false, null, "advancedban",
                "8"), h.only());
        // An IP ban is stored under the address: the player is the online player of that name.
        listener.onPunishment(new PunishmentEvent(punishment("203.0.113.7", "Alt farm", "CONSOLE",
                PunishmentType.TEMP_IP_BAN, END.toEpochMilli(), 9)));
        assertPunishment(issue("Notch", "ban", "Alt farm", null, "CONSOLE", START, END, true, null, "advancedban", "9"),
                h.only());
    }

    @Test
    void muteWarningKickAndNoNote() {
        listener.onPunishment(new PunishmentEvent(punishment(STORED, "Spam", "Moderator", PunishmentType.TEMP_MUTE,
                END.toEpochMilli(), 10)));
        assertPunishment(issue("Notch", "mute", "Spam", STAFF, "Moderator", START, END, false, null, "advancedban",
                "10"), h.only());
        listener.onPunishment(new PunishmentEvent(punishment(STORED, "Language", "Moderator", PunishmentType.WARNING,
                -1, 11)));
        assertPunishment(issue("Notch", "warning", "Language", STAFF, "Moderator", START, null, false, null,
                "advancedban", "11"), h.only());
        listener.onPunishment(new PunishmentEvent(punishment(STORED, "AFK", "Moderator", PunishmentType.KICK, -1, -1)));
        assertPunishment(issue("Notch", "kick", "AFK", STAFF, "Moderator", START, null, false, null, "advancedban",
                null), h.only());
        listener.onPunishment(new PunishmentEvent(punishment(STORED, "note", "Moderator", PunishmentType.NOTE, -1, 12)));
        assertTrue(h.records().isEmpty(), "a note is not a punishment");
        assertEquals(3, integration.snapshot().sent());
    }

    @Test
    void anOfflinePlayerKnownOnlyByAddressIsCountedNotSent() {
        listener.onPunishment(new PunishmentEvent(new Punishment("203.0.113.7", "203.0.113.7", "Proxy", "CONSOLE",
                PunishmentType.IP_BAN, START.toEpochMilli(), -1, "", 13)));
        assertTrue(h.records().isEmpty());
        assertEquals(1, integration.snapshot().dropped());
    }

    @Test
    void revokesNameThePunishmentButNotWhoNorWhy() {
        listener.onRevoke(new RevokePunishmentEvent(punishment(STORED, "Griefing", "Moderator", PunishmentType.TEMP_BAN,
                END.toEpochMilli(), 7), false));
        assertPunishment(revoke("Notch", "ban", null, null, null, "advancedban", "7"), h.only());
        listener.onRevoke(new RevokePunishmentEvent(punishment(STORED, "Spam", "Moderator", PunishmentType.MUTE, -1, 10),
                false));
        assertPunishment(revoke("Notch", "mute", null, null, null, "advancedban", "10"), h.only());
        listener.onRevoke(new RevokePunishmentEvent(punishment(STORED, "Language", "Moderator", PunishmentType.WARNING,
                -1, 11), true));
        assertPunishment(revoke("Notch", "warning", null, null, null, "advancedban", "11"), h.only());
        assertEquals(3, integration.snapshot().sent());
    }

    @Test
    void anExpiryIsNotARevoke() {
        long past = Instant.now().minusSeconds(60).toEpochMilli();
        listener.onRevoke(new RevokePunishmentEvent(punishment(STORED, "Griefing", "Moderator", PunishmentType.TEMP_BAN,
                past, 7), false));
        assertTrue(h.records().isEmpty());
        assertEquals(0, integration.snapshot().sent());
    }

    @Test
    void enableRegistersTheListenerWhichFindsOnlinePlayersByName() {
        List<Listener> registered = new ArrayList<>();
        Player notch = answering(Player.class, Map.of("getName", "Notch", "getUniqueId", PLAYER));
        Player moderator = answering(Player.class, Map.of("getName", "Moderator", "getUniqueId", STAFF));
        PluginManager plugins = (PluginManager) Proxy.newProxyInstance(PluginManager.class.getClassLoader(),
                new Class<?>[] {PluginManager.class}, (proxy, m, args) -> {
                    if (m.getName().equals("registerEvents")) {
                        registered.add((Listener) args[0]);
                        return null;
                    }
                    throw new UnsupportedOperationException(m.getName());
                });
        Server server = answering(Server.class, Map.of("getPluginManager", plugins, "getOnlinePlayers",
                List.of(moderator, notch)));
        Plugin warden = answering(Plugin.class, Map.of("getServer", server));
        Integration started = h.integrations.enable("AdvancedBan", "2.3.0",
                i -> AdvancedBanIntegration.enable(warden, h.capture, i));
        assertTrue(started.active());
        assertEquals(1, registered.size());
        AdvancedBanIntegration registeredListener = (AdvancedBanIntegration) registered.get(0);
        registeredListener.onPunishment(new PunishmentEvent(new Punishment("notch", "203.0.113.7", "Alt farm",
                "moderator", PunishmentType.IP_BAN, START.toEpochMilli(), -1, "", 14)));
        assertPunishment(issue("notch", "ban", "Alt farm", STAFF, "moderator", START, null, true, null, "advancedban",
                "14"), h.only());
        assertEquals(1, started.snapshot().sent());
    }

    @Test
    void aFailingHandlerDisablesAdvancedBanAlone() {
        Integration other = h.on("LiteBans");
        Punishment broken = new Punishment("Notch", STORED, "x", "Moderator", PunishmentType.BAN, 0, -1, "", 1) {
            @Override
            public PunishmentType getType() {
                throw new IllegalStateException("AdvancedBan changed");
            }
        };
        listener.onPunishment(new PunishmentEvent(broken));
        assertFalse(integration.active());
        listener.onPunishment(new PunishmentEvent(punishment(STORED, "x", "CONSOLE", PunishmentType.BAN, -1, 2)));
        assertTrue(h.records().isEmpty());
        assertEquals(1, h.warnings.size(), "logged once: " + h.warnings);
        assertTrue(other.active());
        List<String> status = Integrations.statusLines(h.integrations.snapshot());
        assertEquals("    AdvancedBan test: failed (a punishment issued: java.lang.IllegalStateException: "
                + "AdvancedBan changed), 0 sent", status.get(1));
    }
}
