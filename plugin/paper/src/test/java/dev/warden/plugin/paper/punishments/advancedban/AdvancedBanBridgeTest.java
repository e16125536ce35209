package dev.warden.plugin.paper.punishments.advancedban;

import static dev.warden.plugin.paper.punishments.PunishmentHarness.PLAYER;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.warden.plugin.core.Records;
import dev.warden.plugin.core.enforce.BridgeLinks;
import dev.warden.plugin.core.enforce.PunishmentBridge;
import dev.warden.plugin.paper.punishments.PunishmentHarness;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import me.leoko.advancedban.bukkit.event.PunishmentEvent;
import me.leoko.advancedban.bukkit.event.RevokePunishmentEvent;
import me.leoko.advancedban.utils.Punishment;
import me.leoko.advancedban.utils.PunishmentType;
import org.junit.jupiter.api.Test;

/**
 * Dashboard actions as AdvancedBan API calls (the punishment drafted for {@code create(true)}, the
 * lift), and AdvancedBan's events for them through the real integration listener: the echo.
 */
class AdvancedBanBridgeTest {
    static final UUID WEB_BAN = UUID.fromString("0190a5f2-0000-7000-8000-000000000042");
    static final String STORED = PLAYER.toString().replace("-", "");

    final PunishmentHarness h = new PunishmentHarness();
    final AdvancedBanIntegration listener = new AdvancedBanIntegration(h.capture, h.on("AdvancedBan"), name -> null);
    final BridgeLinks links = new BridgeLinks(Clock.systemUTC());
    final List<String> calls = new ArrayList<>();
    int nextId = 7;

    /** Stores like AdvancedBan: an id, then its PunishmentEvent (its RevokePunishmentEvent on a lift). */
    final AdvancedBanBridge.Store store = new AdvancedBanBridge.Store() {
        @Override
        public int create(Punishment p) {
            calls.add(p.getName() + " " + p.getUuid() + " " + p.getType() + " " + p.getReason() + " " + p.getOperator()
                    + " " + (p.getEnd() == -1 ? "permanent" : Instant.ofEpochMilli(p.getEnd()).toString()));
            int id = nextId++;
            listener.onPunishment(new PunishmentEvent(new Punishment(p.getName(), p.getUuid(), p.getReason(),
                    p.getOperator(), p.getType(), p.getStart(), p.getEnd(), p.getCalculation(), id)));
            return id;
        }

        @Override
        public boolean delete(String type, String uuid, Integer id) {
            calls.add("delete " + type + " " + uuid + " " + id);
            listener.onRevoke(new RevokePunishmentEvent(new Punishment("Notch", uuid, "x", "Warden",
                    type.equals("ban") ? PunishmentType.BAN : PunishmentType.MUTE, 1, -1, null, id == null ? 99 : id), false));
            return id == null || id != 404;
        }
    };

    final AdvancedBanBridge bridge = new AdvancedBanBridge(new AdvancedBanBridge.OnServerThread() {
        @Override
        public <T> T call(Callable<T> task) throws PunishmentBridge.Refused {
            try {
                return task.call();
            } catch (Exception e) {
                throw new PunishmentBridge.Refused(e.toString());
            }
        }
    }, store);

    AdvancedBanBridgeTest() {
        h.capture.bridgeLinks(links);
    }

    List<Records.Punishment> sent() {
        return h.punishments();
    }

    @Test
    void issuesAreDraftedAsAdvancedBanStoresThemAndTheirEventsAreTheEcho() throws Exception {
        Instant end = Instant.parse("2099-01-01T00:00:00Z");
        links.expectIssue("advancedban", PLAYER, "ban", WEB_BAN);
        assertEquals("7", bridge.issue("ban", PLAYER, "Notch", "x-ray - Appeal at https://w.example/appeal/t", end));
        bridge.issue("mute", PLAYER, "Notch", "§ccaps\nlock", null);
        bridge.issue("warning", PLAYER, null, "x".repeat(300), null);
        assertEquals(List.of(
                "Notch " + STORED + " TEMP_BAN x-ray - Appeal at https://w.example/appeal/t Warden " + end,
                "Notch " + STORED + " MUTE caps lock Warden permanent",
                PLAYER + " " + STORED + " WARNING " + "x".repeat(AdvancedBanBridge.MAX_REASON) + " Warden permanent"),
                calls);
        List<Records.Punishment> sent = sent();
        assertEquals(List.of("8", "9"), sent.stream().map(Records.Punishment::externalId).toList(),
                "the ban's event is the echo; the mute and warning were not expected, so they are AdvancedBan's own");
        assertEquals("7", links.linkOf(WEB_BAN).externalId());
        assertThrows(PunishmentBridge.Refused.class, () -> bridge.issue("kick", PLAYER, "Notch", "x", null));
    }

    @Test
    void liftsByIdOrByPlayerAndTheirEventIsTheEcho() throws Exception {
        links.expectRevoke("advancedban", PLAYER, "ban");
        bridge.lift("ban", PLAYER, null, "12", "sorry");
        assertEquals(List.of(), sent(), "the revoke event is the echo of the dashboard's revoke");
        bridge.lift("mute", PLAYER, null, null, null);
        assertEquals(List.of("delete ban " + STORED + " 12", "delete mute " + STORED + " null"), calls);
        assertEquals("99", sent().get(0).externalId(), "not expected: sent as AdvancedBan's own");
        assertThrows(PunishmentBridge.Refused.class, () -> bridge.lift("ban", PLAYER, null, "404", null));
        assertThrows(PunishmentBridge.Refused.class, () -> bridge.lift("ban", PLAYER, null, "abc", null));
    }
}
