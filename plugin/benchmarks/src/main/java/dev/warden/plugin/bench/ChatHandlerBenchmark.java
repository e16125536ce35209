package dev.warden.plugin.bench;

import dev.warden.plugin.core.Capture;
import dev.warden.plugin.core.EventQueue;
import dev.warden.plugin.core.WardenConfig;
import dev.warden.plugin.paper.listener.PaperChatListener;
import dev.warden.plugin.paper.listener.PlayerListener;
import dev.warden.plugin.paper.listener.SpigotChatListener;
import io.papermc.paper.event.player.AsyncChatEvent;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import net.kyori.adventure.text.Component;
import org.bukkit.entity.Player;
import org.bukkit.event.player.AsyncPlayerChatEvent;
import org.bukkit.event.player.PlayerCommandPreprocessEvent;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What one event costs the thread that fires it: the listener builds the record (id, time, text
 * clipped) and queues it. Beside it, a bare ConcurrentLinkedQueue offer of a ready object. Every
 * benchmark also takes one element out, so the queue stays small and the offers never hit the
 * full-queue path; the poll costs the same in each.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ChatHandlerBenchmark {
    private final ConcurrentLinkedQueue<Object> bare = new ConcurrentLinkedQueue<>();
    private final Object ready = new Object();
    private EventQueue queue;
    private SpigotChatListener spigotChat;
    private PaperChatListener paperChat;
    private PlayerListener players;
    private AsyncPlayerChatEvent spigotEvent;
    private AsyncChatEvent paperEvent;
    private PlayerCommandPreprocessEvent commandEvent;

    /** A player as the server has it: fields read by getters. */
    static final class BenchPlayer implements Player {
        private final UUID id = UUID.randomUUID();

        @Override
        public String getName() {
            return "Notch";
        }

        @Override
        public UUID getUniqueId() {
            return id;
        }

        @Override
        public InetSocketAddress getAddress() {
            return null;
        }

        @Override
        public int getProtocolVersion() {
            return 769;
        }

        @Override
        public int getPing() {
            return 42;
        }

        @Override
        public boolean hasPermission(String name) {
            return false;
        }

        @Override
        public void sendMessage(String message) {}
    }

    @Setup
    public void setUp() {
        queue = new EventQueue(1_000_000);
        Capture capture = new Capture(queue, UUID.randomUUID(),
                WardenConfig.defaults("http://127.0.0.1:8080", "wdn_plugin_x"), Clock.systemUTC());
        spigotChat = new SpigotChatListener(capture);
        paperChat = new PaperChatListener(capture);
        players = new PlayerListener(capture, true);
        BenchPlayer player = new BenchPlayer();
        String line = "does anyone want to trade 3 diamonds for an enchanted book?";
        spigotEvent = new AsyncPlayerChatEvent(true, player, line, Set.of());
        paperEvent = new AsyncChatEvent(true, player, Component.text(line));
        commandEvent = new PlayerCommandPreprocessEvent(player, "/login hunter2");
    }

    @Benchmark
    public Object bareQueueOffer() {
        bare.offer(ready);
        return bare.poll();
    }

    @Benchmark
    public Object spigotChatHandler() {
        spigotChat.onChat(spigotEvent);
        return queue.drain(1);
    }

    @Benchmark
    public Object paperChatHandler() {
        paperChat.onChat(paperEvent);
        return queue.drain(1);
    }

    @Benchmark
    public Object redactedCommandHandler() {
        players.onCommand(commandEvent);
        return queue.drain(1);
    }
}
