package dev.warden.plugin.velocity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.velocitypowered.api.command.CommandManager;
import com.velocitypowered.api.command.CommandMeta;
import com.velocitypowered.api.event.EventManager;
import com.velocitypowered.api.event.proxy.ProxyInitializeEvent;
import com.velocitypowered.api.event.proxy.ProxyShutdownEvent;
import com.velocitypowered.api.proxy.ProxyServer;
import com.velocitypowered.api.proxy.config.ProxyConfig;
import com.velocitypowered.api.proxy.messages.ChannelRegistrar;
import com.velocitypowered.api.scheduler.ScheduledTask;
import com.velocitypowered.api.scheduler.Scheduler;
import com.velocitypowered.api.util.ProxyVersion;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The entry point on a stand-in proxy: what it registers, with and without a usable config.yml. */
class WardenVelocityTest {
    @TempDir
    Path dir;

    final List<String> calls = new ArrayList<>();
    final List<Object> listeners = new ArrayList<>();

    /** An interface whose every call is logged by name and answered by {@code answer} (null: nothing). */
    @SuppressWarnings("unchecked")
    <T> T recorder(Class<T> type, Function<String, Object> answer) {
        return (T) Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (self, m, args) -> {
            if (m.getDeclaringClass() == Object.class) {
                return m.getName().equals("toString") ? type.getSimpleName() : m.getName().equals("equals")
                        ? self == args[0] : System.identityHashCode(self);
            }
            calls.add(type.getSimpleName() + "." + m.getName());
            if (type == EventManager.class && m.getName().equals("register")) {
                listeners.add(args[1]);
            }
            Object a = answer.apply(m.getName());
            if (a == null && m.isDefault()) {
                return InvocationHandler.invokeDefault(self, m, args);
            }
            return a;
        });
    }

    ProxyServer server() {
        CommandMeta meta = recorder(CommandMeta.class, n -> null);
        CommandMeta.Builder[] builder = new CommandMeta.Builder[1];
        builder[0] = recorder(CommandMeta.Builder.class, n -> n.equals("build") ? meta : builder[0]);
        CommandManager commands = recorder(CommandManager.class, n -> n.equals("metaBuilder") ? builder[0] : null);
        ScheduledTask task = recorder(ScheduledTask.class, n -> null);
        Scheduler.TaskBuilder[] tasks = new Scheduler.TaskBuilder[1];
        tasks[0] = recorder(Scheduler.TaskBuilder.class, n -> n.equals("schedule") ? task : tasks[0]);
        Scheduler scheduler = recorder(Scheduler.class, n -> tasks[0]);
        ChannelRegistrar channels = recorder(ChannelRegistrar.class, n -> null);
        EventManager events = recorder(EventManager.class, n -> null);
        ProxyConfig config = recorder(ProxyConfig.class, n -> 500);
        return recorder(ProxyServer.class, n -> switch (n) {
            case "getCommandManager" -> commands;
            case "getScheduler" -> scheduler;
            case "getChannelRegistrar" -> channels;
            case "getEventManager" -> events;
            case "getConfiguration" -> config;
            case "getVersion" -> new ProxyVersion("Velocity", "Velocity Contributors", "3.4.0");
            case "getPlayerCount" -> 0;
            default -> null;
        });
    }

    @Test
    void withoutAKeyItWritesConfigYmlRegistersTheCommandAndSendsNothing() throws Exception {
        WardenVelocity plugin = new WardenVelocity(server(), dir);
        plugin.onInitialize(new ProxyInitializeEvent());
        assertTrue(Files.readString(dir.resolve("config.yml")).contains("plugin-key: \"PASTE_YOUR_PLUGIN_KEY_HERE\""));
        assertTrue(calls.contains("ChannelRegistrar.register"), calls.toString());
        assertTrue(calls.contains("CommandManager.register"), calls.toString());
        assertTrue(listeners.isEmpty(), "no listener until config.yml has a key");
        assertTrue(!Files.exists(dir.resolve("server-id")), "not started");
        plugin.onShutdown(new ProxyShutdownEvent());
    }

    @Test
    void withAKeyItStartsTheListenerAndTheExpiryTask() throws Exception {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("config.yml"), "base-url: \"http://127.0.0.1:9\"\nplugin-key: \"wdn_plugin_x\"\n"
                + "delivery:\n  shutdown-flush-seconds: 0\n");
        WardenVelocity plugin = new WardenVelocity(server(), dir);
        plugin.onInitialize(new ProxyInitializeEvent());
        assertEquals(1, listeners.size());
        assertInstanceOf(ProxyListener.class, listeners.get(0));
        assertTrue(calls.contains("TaskBuilder.repeat") && calls.contains("TaskBuilder.schedule"), calls.toString());
        assertTrue(Files.exists(dir.resolve("server-id")), "the proxy's own id");
        plugin.onShutdown(new ProxyShutdownEvent());
        assertTrue(calls.contains("ScheduledTask.cancel") && calls.contains("CommandManager.unregister"), calls.toString());
    }
}
