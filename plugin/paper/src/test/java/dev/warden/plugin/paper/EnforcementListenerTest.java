package dev.warden.plugin.paper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.warden.plugin.core.enforce.AppealLink;
import dev.warden.plugin.core.enforce.Sanctions;
import dev.warden.plugin.paper.enforce.LoginGuard;
import dev.warden.plugin.paper.enforce.PaperMuteListener;
import dev.warden.plugin.paper.enforce.SpigotMuteListener;
import io.papermc.paper.event.player.AsyncChatEvent;
import java.lang.reflect.Proxy;
import java.net.InetAddress;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import net.kyori.adventure.text.Component;
import org.bukkit.entity.Player;
import org.bukkit.event.player.AsyncPlayerChatEvent;
import org.bukkit.event.player.AsyncPlayerPreLoginEvent;
import org.junit.jupiter.api.Test;

/** The local ban and mute lists at login and in chat. */
@SuppressWarnings("deprecation") // getKickMessage(): the String form the guard sets
class EnforcementListenerTest {
    static final UUID NOTCH = UUID.fromString("069a79f4-44e9-4726-a5be-fca90e38aaf5");
    static final UUID JEB = UUID.fromString("853c80ef-3c37-49fd-aa49-938b674adae6");
    static final Instant NOW = Instant.parse("2026-11-29T07:00:00Z");
    final Clock clock = Clock.fixed(NOW, ZoneOffset.UTC);
    final List<String> said = new ArrayList<>();

    Player player(UUID id) {
        return (Player) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Player.class},
                (proxy, m, args) -> switch (m.getName()) {
                    case "getUniqueId" -> id;
                    case "getName" -> "p";
                    case "sendMessage" -> {
                        said.add((String) args[0]);
                        yield null;
                    }
                    default -> throw new UnsupportedOperationException(m.getName());
                });
    }

    static Sanctions.Entry entry(String type, Instant expires) {
        return new Sanctions.Entry(UUID.randomUUID(), type, NOTCH, "Notch", "griefing", expires, NOW.minusSeconds(60));
    }

    static AsyncPlayerPreLoginEvent login(UUID id) throws Exception {
        return new AsyncPlayerPreLoginEvent("Notch", InetAddress.getByName("203.0.113.7"), id, false);
    }

    @Test
    void aBannedPlayerIsRefusedAtLoginOthersAreNot() throws Exception {
        Sanctions s = new Sanctions();
        s.put(entry("ban", NOW.plusSeconds(86_400)));
        s.put(entry("mute", null));
        ServerHarness h = new ServerHarness();
        LoginGuard guard = new LoginGuard(s, clock);

        AsyncPlayerPreLoginEvent banned = login(NOTCH);
        h.fire(guard, banned);
        assertEquals(AsyncPlayerPreLoginEvent.Result.KICK_BANNED, banned.getLoginResult());
        assertEquals("You are banned from this server until 2026-11-30 07:00 UTC: griefing", banned.getKickMessage());

        AsyncPlayerPreLoginEvent other = login(JEB);
        h.fire(guard, other);
        assertEquals(AsyncPlayerPreLoginEvent.Result.ALLOWED, other.getLoginResult());

        // With the ban's appeal link: the refusal names the form while the link works.
        Sanctions linked = new Sanctions();
        Sanctions.Entry ban = entry("ban", null);
        linked.put(ban.withAppeal(new AppealLink("https://warden.example.net/appeal/tok", NOW.plusSeconds(60))));
        AsyncPlayerPreLoginEvent appealable = login(NOTCH);
        h.fire(new LoginGuard(linked, clock), appealable);
        assertEquals("You are banned from this server: griefing\nAppeal at https://warden.example.net/appeal/tok",
                appealable.getKickMessage());
        AsyncPlayerPreLoginEvent later = login(NOTCH);
        h.fire(new LoginGuard(linked, Clock.fixed(NOW.plusSeconds(61), ZoneOffset.UTC)), later);
        assertEquals("You are banned from this server: griefing", later.getKickMessage(), "an expired link is left out");

        AsyncPlayerPreLoginEvent full = login(NOTCH);
        full.disallow(AsyncPlayerPreLoginEvent.Result.KICK_FULL, "full");
        h.fire(guard, full);
        assertEquals("full", full.getKickMessage(), "another plugin's refusal stands");
    }

    @Test
    void anExpiredOrRevokedBanNoLongerRefuses() throws Exception {
        Sanctions s = new Sanctions();
        Sanctions.Entry expired = entry("ban", NOW.minusSeconds(1));
        Sanctions.Entry permanent = entry("ban", null);
        s.put(expired);
        s.put(permanent);
        ServerHarness h = new ServerHarness();
        AsyncPlayerPreLoginEvent first = login(NOTCH);
        h.fire(new LoginGuard(s, clock), first);
        assertEquals(AsyncPlayerPreLoginEvent.Result.KICK_BANNED, first.getLoginResult());
        s.remove(permanent.punishmentId());
        AsyncPlayerPreLoginEvent second = login(NOTCH);
        h.fire(new LoginGuard(s, clock), second);
        assertEquals(AsyncPlayerPreLoginEvent.Result.ALLOWED, second.getLoginResult());
    }

    @Test
    void aMutedPlayersChatIsCancelledOnPaperAndSpigot() {
        Sanctions s = new Sanctions();
        s.put(entry("mute", NOW.plusSeconds(600)));
        ServerHarness h = new ServerHarness();

        AsyncChatEvent paper = new AsyncChatEvent(true, player(NOTCH), Component.text("hi"));
        h.fire(new PaperMuteListener(s, clock), paper);
        assertTrue(paper.isCancelled());
        assertEquals(List.of("You are muted until 2026-11-29 07:10 UTC: griefing"), said);

        AsyncPlayerChatEvent spigot = new AsyncPlayerChatEvent(true, player(NOTCH), "hi", Set.of());
        h.fire(new SpigotMuteListener(s, clock), spigot);
        assertTrue(spigot.isCancelled());

        AsyncPlayerChatEvent free = new AsyncPlayerChatEvent(true, player(JEB), "hi", Set.of());
        h.fire(new SpigotMuteListener(s, clock), free);
        assertFalse(free.isCancelled());
        AsyncPlayerChatEvent later = new AsyncPlayerChatEvent(true, player(NOTCH), "hi", Set.of());
        h.fire(new SpigotMuteListener(s, Clock.fixed(NOW.plusSeconds(601), ZoneOffset.UTC)), later);
        assertFalse(later.isCancelled(), "the mute has expired");
    }
}
