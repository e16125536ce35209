package dev.warden.plugin.paper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.warden.plugin.core.Records;
import dev.warden.plugin.core.UuidV7;
import dev.warden.plugin.core.WardenConfig;
import dev.warden.plugin.core.WardenRecord;
import dev.warden.plugin.paper.listener.PaperChatListener;
import dev.warden.plugin.paper.listener.PlayerListener;
import dev.warden.plugin.paper.listener.SpigotChatListener;
import io.papermc.paper.event.player.AsyncChatEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import net.kyori.adventure.text.Component;
import net.kyori.adventure.text.format.NamedTextColor;
import org.bukkit.entity.Player;
import org.bukkit.event.player.AsyncPlayerChatEvent;
import org.bukkit.event.player.PlayerCommandPreprocessEvent;
import org.bukkit.event.player.PlayerJoinEvent;
import org.bukkit.event.player.PlayerKickEvent;
import org.bukkit.event.player.PlayerQuitEvent;
import org.junit.jupiter.api.Test;

/** Each server event through the listeners, and the record that comes out. */
class ListenerTest {
    static final UUID ID = UUID.fromString("069a79f4-44e9-4726-a5be-fca90e38aaf5");
    final Player notch = ServerHarness.player(ID, "Notch", "203.0.113.7", 769);

    private static <T extends WardenRecord> T only(List<WardenRecord> records, Class<T> type) {
        assertEquals(1, records.size(), records.toString());
        assertTrue(type.isInstance(records.get(0)), records.get(0).toString());
        return type.cast(records.get(0));
    }

    private static void madeJustNow(UUID id, Instant at) {
        assertEquals(7, id.version());
        assertEquals(at.toEpochMilli(), UuidV7.epochMillis(id), "the id carries the time it happened");
        assertTrue(Duration.between(at, Instant.now()).abs().toSeconds() < 5);
    }

    @Test
    void joinSendsAddressAndClientVersion() {
        ServerHarness h = new ServerHarness();
        h.fire(new PlayerListener(h.capture, true), new PlayerJoinEvent(notch, "joined"));
        Records.Session s = only(h.records(), Records.Session.class);
        assertEquals("join", s.event());
        assertEquals(ID, s.playerUuid());
        assertEquals("Notch", s.playerName());
        assertEquals("203.0.113.7", s.ip());
        assertEquals("protocol 769", s.clientVersion());
        assertEquals(ServerHarness.SERVER, s.serverId());
        madeJustNow(s.id(), s.at());
        assertEquals("203.0.113.7", s.toJson().get("ip").getAsString());
    }

    @Test
    void joinOnSpigotHasNoClientVersionAndSendIpCanBeOff() {
        WardenConfig base = WardenConfig.defaults("http://x", "wdn_plugin_x");
        WardenConfig noIp = new WardenConfig(base.baseUrl(), base.pluginKey(), 15, null, 1000, 64, 8, 5, 10, 300,
                true, true, true, false, true, true, "global", base.redactCommands(), List.of());
        ServerHarness h = new ServerHarness(noIp);
        h.fire(new PlayerListener(h.capture, false), new PlayerJoinEvent(notch, "joined"));
        Records.Session s = only(h.records(), Records.Session.class);
        assertNull(s.ip());
        assertNull(s.clientVersion());
        assertFalse(s.toJson().has("ip"));
    }

    @Test
    void quit() {
        ServerHarness h = new ServerHarness();
        h.fire(new PlayerListener(h.capture, true), new PlayerQuitEvent(notch, "left"));
        Records.Session s = only(h.records(), Records.Session.class);
        assertEquals("quit", s.event());
        assertNull(s.ip());
        madeJustNow(s.id(), s.at());
    }

    @Test
    void paperChatIsSentAsPlainText() {
        ServerHarness h = new ServerHarness();
        Component message = Component.text("hello ").append(Component.text("world", NamedTextColor.RED));
        h.fire(new PaperChatListener(h.capture), new AsyncChatEvent(true, notch, message));
        Records.Chat c = only(h.records(), Records.Chat.class);
        assertEquals("chat", c.entryType());
        assertEquals("hello world", c.message());
        assertEquals("global", c.channel());
        assertEquals(ID, c.playerUuid());
        madeJustNow(c.id(), c.sentAt());
    }

    @Test
    @SuppressWarnings("deprecation")
    void spigotChatAndCancelledChatIsNotSent() {
        ServerHarness h = new ServerHarness();
        SpigotChatListener listener = new SpigotChatListener(h.capture);
        h.fire(listener, new AsyncPlayerChatEvent(true, notch, "hi", Set.of()));
        assertEquals("hi", only(h.records(), Records.Chat.class).message());
        AsyncPlayerChatEvent cancelled = new AsyncPlayerChatEvent(true, notch, "blocked", Set.of());
        cancelled.setCancelled(true);
        h.fire(listener, cancelled);
        assertTrue(h.records().isEmpty());
    }

    @Test
    void commandsAreSentWithPasswordsRedacted() {
        ServerHarness h = new ServerHarness();
        PlayerListener listener = new PlayerListener(h.capture, true);
        h.fire(listener, new PlayerCommandPreprocessEvent(notch, "/msg Jeb hi there"));
        h.fire(listener, new PlayerCommandPreprocessEvent(notch, "/login hunter2"));
        h.fire(listener, new PlayerCommandPreprocessEvent(notch, "/AuthMe:Register hunter2 hunter2"));
        List<WardenRecord> records = h.records();
        assertEquals(List.of("/msg Jeb hi there", "/login [redacted]", "/AuthMe:Register [redacted]"),
                records.stream().map(r -> ((Records.Chat) r).message()).toList());
        records.forEach(r -> assertEquals("command", ((Records.Chat) r).entryType()));
        assertFalse(records.toString().contains("hunter2"));
    }

    @Test
    void kickIsAPunishmentAndABanKickIsABan() {
        ServerHarness h = new ServerHarness();
        PlayerListener listener = new PlayerListener(h.capture, true);
        h.fire(listener, new PlayerKickEvent(notch, "\u00A7cSpamming", "left", PlayerKickEvent.Cause.KICKED));
        Records.Punishment kick = only(h.records(), Records.Punishment.class);
        assertEquals("kick", kick.type());
        assertEquals("issue", kick.action());
        assertEquals("Spamming", kick.reason());
        assertEquals("minecraft", kick.sourcePlugin());
        assertNull(kick.staffUuid());
        madeJustNow(kick.id(), kick.issuedAt());

        h.fire(listener, new PlayerKickEvent(notch, "Banned: griefing", "left", PlayerKickEvent.Cause.BANNED));
        Records.Punishment ban = only(h.records(), Records.Punishment.class);
        assertEquals("ban", ban.type());
        assertEquals(Boolean.FALSE, ban.ipBased());
        h.fire(listener, new PlayerKickEvent(notch, "IP banned", "left", PlayerKickEvent.Cause.IP_BANNED));
        assertEquals(Boolean.TRUE, only(h.records(), Records.Punishment.class).ipBased());

        PlayerKickEvent cancelled = new PlayerKickEvent(notch, "x", "left", PlayerKickEvent.Cause.KICKED);
        cancelled.setCancelled(true);
        h.fire(listener, cancelled);
        assertTrue(h.records().isEmpty(), "a cancelled kick did not happen");
    }

    @Test
    void withAPunishmentPluginOnItsKicksAreLeftToItAndTheServersOwnAreStillSent() {
        ServerHarness h = new ServerHarness();
        boolean[] pluginOn = {true};
        PlayerListener paper = new PlayerListener(h.capture, true, () -> pluginOn[0], () -> false);
        h.fire(paper, new PlayerKickEvent(notch, "Banned by LiteBans", "left", PlayerKickEvent.Cause.PLUGIN));
        assertTrue(h.records().isEmpty(), "the punishment plugin sends its own kick or ban");
        h.fire(paper, new PlayerKickEvent(notch, "Kicked by an operator", "left", PlayerKickEvent.Cause.KICK_COMMAND));
        assertEquals("kick", only(h.records(), Records.Punishment.class).type());
        h.fire(paper, new PlayerKickEvent(notch, "Banned", "left", PlayerKickEvent.Cause.BANNED));
        assertEquals("ban", only(h.records(), Records.Punishment.class).type());
        h.fire(paper, new PlayerKickEvent(notch, "IP banned", "left", PlayerKickEvent.Cause.IP_BANNED));
        assertEquals(Boolean.TRUE, only(h.records(), Records.Punishment.class).ipBased());

        PlayerListener spigot = new PlayerListener(h.capture, false, () -> pluginOn[0], () -> false);
        h.fire(spigot, new PlayerKickEvent(notch, "Kicked", "left", null));
        assertTrue(h.records().isEmpty(), "Spigot gives no cause: every kick is left to the punishment plugin");

        pluginOn[0] = false; // the integration failed: kicks are sent from here again
        h.fire(paper, new PlayerKickEvent(notch, "Banned by LiteBans", "left", PlayerKickEvent.Cause.PLUGIN));
        assertEquals("kick", only(h.records(), Records.Punishment.class).type());
        h.fire(spigot, new PlayerKickEvent(notch, "Kicked", "left", null));
        assertEquals("kick", only(h.records(), Records.Punishment.class).type());
    }

    @Test
    void capturesCanBeSwitchedOff() {
        WardenConfig base = WardenConfig.defaults("http://x", "wdn_plugin_x");
        WardenConfig off = new WardenConfig(base.baseUrl(), base.pluginKey(), 15, null, 1000, 64, 8, 5, 10, 300,
                false, false, false, true, false, false, "global", base.redactCommands(), List.of());
        ServerHarness h = new ServerHarness(off);
        PlayerListener listener = new PlayerListener(h.capture, true);
        h.fire(listener, new PlayerJoinEvent(notch, "j"));
        h.fire(listener, new PlayerCommandPreprocessEvent(notch, "/spawn"));
        h.fire(listener, new PlayerKickEvent(notch, "x", "l", PlayerKickEvent.Cause.KICKED));
        h.fire(new PaperChatListener(h.capture), new AsyncChatEvent(true, notch, Component.text("hi")));
        assertTrue(h.records().isEmpty());
    }

    @Test
    void customEventsThroughTheStaticApi() {
        ServerHarness h = new ServerHarness();
        Warden.set(h.capture);
        try {
            assertTrue(Warden.track(notch, "crate_opened", java.util.Map.of("crate", "vote", "keys", 2)));
            Records.CustomEvent e = only(h.records(), Records.CustomEvent.class);
            assertEquals("crate_opened", e.name());
            assertEquals(ID, e.playerUuid());
            assertEquals("vote", e.properties().get("crate").getAsString());
            madeJustNow(e.id(), e.occurredAt());
            IllegalArgumentException bad = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                    () -> Warden.track(notch, "chat_spam", null));
            assertTrue(bad.getMessage().startsWith("reserved_prefix"));
        } finally {
            Warden.set(null);
        }
        assertFalse(Warden.track(notch, "crate_opened"), "not running: false, nothing queued");
    }
}
