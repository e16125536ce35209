package dev.warden.plugin.paper.punishments.libertybans;

import static dev.warden.plugin.paper.punishments.PunishmentHarness.PLAYER;
import static dev.warden.plugin.paper.punishments.PunishmentHarness.answering;
import static dev.warden.plugin.paper.punishments.libertybans.LibertyBansIntegrationTest.GLOBAL;
import static dev.warden.plugin.paper.punishments.libertybans.LibertyBansIntegrationTest.SCOPES;
import static dev.warden.plugin.paper.punishments.libertybans.LibertyBansIntegrationTest.pardoned;
import static dev.warden.plugin.paper.punishments.libertybans.LibertyBansIntegrationTest.punished;
import static dev.warden.plugin.paper.punishments.libertybans.LibertyBansIntegrationTest.punishment;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.warden.plugin.core.Records;
import dev.warden.plugin.core.enforce.BridgeLinks;
import dev.warden.plugin.core.enforce.PunishmentBridge;
import dev.warden.plugin.core.integration.Integration;
import dev.warden.plugin.paper.punishments.PunishmentHarness;
import java.lang.reflect.Proxy;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import space.arim.libertybans.api.ConsoleOperator;
import space.arim.libertybans.api.LibertyBans;
import space.arim.libertybans.api.PlayerVictim;
import space.arim.libertybans.api.PunishmentType;
import space.arim.libertybans.api.event.PostPardonEvent;
import space.arim.libertybans.api.event.PostPunishEvent;
import space.arim.libertybans.api.punish.DraftPunishment;
import space.arim.libertybans.api.punish.DraftPunishmentBuilder;
import space.arim.libertybans.api.punish.Punishment;
import space.arim.libertybans.api.punish.PunishmentDrafter;
import space.arim.libertybans.api.punish.PunishmentRevoker;
import space.arim.libertybans.api.punish.RevocationOrder;
import space.arim.omnibus.events.EventConsumer;
import space.arim.omnibus.util.concurrent.ReactionStage;

/**
 * Dashboard actions as LibertyBans API calls (a draft enacted, a revocation order), and its events
 * for them through the real integration handlers: the echo.
 */
class LibertyBansBridgeTest {
    static final Instant NOW = Instant.parse("2026-11-29T07:00:00Z");
    static final UUID WEB_BAN = UUID.fromString("0190a5f2-0000-7000-8000-000000000042");

    final PunishmentHarness h = new PunishmentHarness();
    final Integration integration = h.on("LibertyBans");
    final EventConsumer<PostPunishEvent> punish = LibertyBansIntegration.onPunish(h.capture, integration, SCOPES);
    final EventConsumer<PostPardonEvent> pardon = LibertyBansIntegration.onPardon(h.capture, integration);
    final BridgeLinks links = new BridgeLinks(Clock.systemUTC());
    final List<String> calls = new ArrayList<>();
    long nextId = 500;
    boolean conflict;

    @SuppressWarnings("unchecked")
    static <T> ReactionStage<T> done(T value) {
        CompletableFuture<T> f = CompletableFuture.completedFuture(value);
        return (ReactionStage<T>) Proxy.newProxyInstance(ReactionStage.class.getClassLoader(),
                new Class<?>[] {ReactionStage.class}, (proxy, m, args) -> m.getName().equals("toCompletableFuture") ? f
                        : m.invoke(f, args));
    }

    /** Behaves like LibertyBans: enacting stores it (a new id) and fires PostPunishEvent; a revoke fires PostPardonEvent. */
    final LibertyBans api = answering(LibertyBans.class, Map.of(
            "getDrafter", answering(PunishmentDrafter.class, Map.of("draftBuilder", builder())),
            "getRevoker", (PunishmentRevoker) Proxy.newProxyInstance(PunishmentRevoker.class.getClassLoader(),
                    new Class<?>[] {PunishmentRevoker.class}, (proxy, m, args) -> {
                        calls.add(m.getName() + " " + java.util.Arrays.stream(args)
                                .map(a -> a instanceof PlayerVictim v ? v.getUUID() : a).toList());
                        long id = m.getName().equals("revokeById") ? (Long) args[0] : 77;
                        PunishmentType type = m.getName().equals("revokeById") ? PunishmentType.BAN : (PunishmentType) args[0];
                        return answering(RevocationOrder.class, Map.of("undoPunishment", done(lift(id, type))));
                    })));

    boolean lift(long id, PunishmentType type) {
        if (id == 404) {
            return false;
        }
        pardon.accept(pardoned(punishment(id, type, PlayerVictim.of(PLAYER), ConsoleOperator.INSTANCE, "x",
                Punishment.PERMANENT_END_DATE, GLOBAL), ConsoleOperator.INSTANCE));
        return true;
    }

    DraftPunishmentBuilder builder() {
        List<Object> draft = new ArrayList<>();
        return (DraftPunishmentBuilder) Proxy.newProxyInstance(DraftPunishmentBuilder.class.getClassLoader(),
                new Class<?>[] {DraftPunishmentBuilder.class}, (proxy, m, args) -> {
                    if (!m.getName().equals("build")) {
                        draft.add(m.getName() + "=" + (args[0] instanceof PlayerVictim v ? v.getUUID() : args[0]));
                        return proxy;
                    }
                    return answering(DraftPunishment.class, Map.of("enactPunishment", done(enact(draft))));
                });
    }

    /** Runs when build() is called (the test enacts at once). */
    Optional<Punishment> enact(List<Object> draft) {
        calls.add(String.join(" ", draft.stream().map(Object::toString).toList()));
        draft.clear();
        if (conflict) {
            return Optional.empty();
        }
        Punishment p = punishment(nextId++, PunishmentType.BAN, PlayerVictim.of(PLAYER), ConsoleOperator.INSTANCE, "x",
                Punishment.PERMANENT_END_DATE, GLOBAL);
        punish.accept(punished(p));
        return Optional.of(p);
    }

    final LibertyBansBridge bridge = new LibertyBansBridge(api, Clock.fixed(NOW, ZoneOffset.UTC));

    LibertyBansBridgeTest() {
        h.capture.bridgeLinks(links);
    }

    List<Records.Punishment> sent() {
        return h.punishments();
    }

    @Test
    void aBanIsADraftEnactedItsIdComesBackAndItsEventIsTheEcho() throws Exception {
        links.expectIssue("libertybans", PLAYER, "ban", WEB_BAN);
        assertEquals("500", bridge.issue("ban", PLAYER, "Notch", "x-ray\n§c - Appeal at https://w.example/appeal/t",
                NOW.plus(Duration.ofDays(1))));
        assertEquals("type=BAN victim=" + PLAYER + " reason=x-ray - Appeal at https://w.example/appeal/t"
                + " duration=PT24H", calls.get(0));
        assertEquals(List.of(), sent(), "the echo is not a second punishment");
        conflict = true;
        PunishmentBridge.Refused refused = assertThrows(PunishmentBridge.Refused.class,
                () -> bridge.issue("mute", PLAYER, "Notch", null, null));
        assertEquals("the player already has an active mute there", refused.getMessage());
        assertEquals("type=MUTE victim=" + PLAYER + " reason= duration=PT0S", calls.get(1),
                "zero: permanent");
    }

    @Test
    void liftsByIdOrByPlayerAndTheirEventIsTheEcho() throws Exception {
        links.expectRevoke("libertybans", PLAYER, "ban");
        bridge.lift("ban", PLAYER, null, "500", null);
        assertEquals(List.of(), sent());
        bridge.lift("mute", PLAYER, null, null, null);
        assertEquals(List.of("revokeById [500]", "revokeByTypeAndVictim [MUTE, " + PLAYER + "]"), calls);
        assertEquals("77", sent().get(0).externalId(), "not expected: LibertyBans' own pardon is sent");
        assertThrows(PunishmentBridge.Refused.class, () -> bridge.lift("ban", PLAYER, null, "404", null));
    }
}
