package dev.warden.plugin.paper.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.warden.plugin.core.enforce.Outcome;
import dev.warden.plugin.paper.enforce.PaperEnforcer;
import io.papermc.paper.threadedregions.scheduler.EntityScheduler;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;
import org.bukkit.Server;
import org.bukkit.entity.Player;
import org.bukkit.plugin.Plugin;
import org.bukkit.scheduler.BukkitScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Kicks and messages from the feed's thread land on the thread that owns the player: Bukkit's
 * main thread (a stand-in executor here), or on Folia the player's region (its entity scheduler).
 */
class EnforcerThreadTest {
    static final UUID NOTCH = UUID.fromString("069a79f4-44e9-4726-a5be-fca90e38aaf5");
    final ExecutorService serverThread = Executors.newSingleThreadExecutor(r -> new Thread(r, "Server thread"));
    final List<String> calls = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() {
        serverThread.shutdownNow();
    }

    @SuppressWarnings("unchecked")
    static <T> T proxy(Class<T> type, Map<String, java.util.function.Function<Object[], Object>> answers) {
        return (T) Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (p, m, args) -> {
            var answer = answers.get(m.getName());
            if (answer == null) {
                throw new UnsupportedOperationException(m.getName());
            }
            return answer.apply(args);
        });
    }

    Player player(EntityScheduler scheduler) {
        return proxy(Player.class, Map.of(
                "getUniqueId", a -> NOTCH,
                "getScheduler", a -> scheduler,
                "kickPlayer", a -> {
                    calls.add("kick " + a[0] + " on " + Thread.currentThread().getName());
                    return null;
                },
                "sendMessage", a -> {
                    calls.add("message " + a[0] + " on " + Thread.currentThread().getName());
                    return null;
                }));
    }

    Plugin plugin(Server server) {
        return proxy(Plugin.class, Map.of("getServer", a -> server));
    }

    @Test
    void onBukkitTheLookupAndTheKickRunOnTheMainThread() {
        Player notch = player(null);
        BukkitScheduler scheduler = proxy(BukkitScheduler.class, Map.of("runTask", a -> {
            serverThread.execute((Runnable) a[1]);
            return null;
        }));
        Server server = proxy(Server.class, Map.of(
                "getScheduler", a -> scheduler,
                "getPlayer", a -> {
                    assertEquals("Server thread", Thread.currentThread().getName(), "the player list is read on the main thread");
                    return NOTCH.equals(a[0]) ? notch : null;
                }));
        PaperEnforcer enforcer = new PaperEnforcer(new BukkitPlatformScheduler(plugin(server)));
        assertEquals(Outcome.APPLIED, enforcer.kick(NOTCH, "Kicked: spam"));
        assertEquals(Outcome.APPLIED, enforcer.message(NOTCH, "Warning: language"));
        assertEquals(Outcome.NOT_ONLINE, enforcer.kick(UUID.randomUUID(), "Kicked"));
        assertEquals(List.of("kick Kicked: spam on Server thread", "message Warning: language on Server thread"), calls);
    }

    @Test
    void onFoliaTheKickRunsOnThePlayersRegion() throws Exception {
        List<Runnable> retired = new CopyOnWriteArrayList<>();
        EntityScheduler region = proxy(EntityScheduler.class, Map.of("run", a -> {
            @SuppressWarnings("unchecked")
            Consumer<Object> task = (Consumer<Object>) a[1];
            retired.add((Runnable) a[2]);
            serverThread.execute(() -> task.accept(null));
            return proxy(io.papermc.paper.threadedregions.scheduler.ScheduledTask.class, Map.of());
        }));
        Player notch = player(region);
        Server server = proxy(Server.class, Map.of("getPlayer", a -> NOTCH.equals(a[0]) ? notch : null));
        PlatformScheduler folia = new FoliaScheduler(plugin(server));
        PaperEnforcer enforcer = new PaperEnforcer(folia);
        assertEquals(Outcome.APPLIED, enforcer.kick(NOTCH, "banned"));
        assertEquals(List.of("kick banned on Server thread"), calls);
        assertEquals(Outcome.NOT_ONLINE, enforcer.kick(UUID.randomUUID(), "banned"));

        // The player leaves before the region runs the task: its retired callback answers.
        EntityScheduler gone = proxy(EntityScheduler.class, Map.of("run", a -> {
            ((Runnable) a[2]).run();
            return proxy(io.papermc.paper.threadedregions.scheduler.ScheduledTask.class, Map.of());
        }));
        Player leaving = player(gone);
        Server server2 = proxy(Server.class, Map.of("getPlayer", a -> leaving));
        CompletableFuture<Boolean> f = new FoliaScheduler(plugin(server2)).withPlayer(NOTCH, p -> calls.add("never"));
        assertFalse(f.get());
        assertTrue(retired.size() == 1 && !calls.contains("never"));
    }
}
