package dev.warden.plugin.paper;

import dev.warden.plugin.core.Capture;
import dev.warden.plugin.core.EventQueue;
import dev.warden.plugin.core.WardenConfig;
import dev.warden.plugin.core.WardenRecord;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.util.List;
import java.util.UUID;
import org.bukkit.entity.Player;
import org.bukkit.event.Cancellable;
import org.bukkit.event.Event;
import org.bukkit.event.EventHandler;
import org.bukkit.event.Listener;

/**
 * A small stand-in for the server's event bus: fires an event at a listener the way Bukkit does
 * (every {@code @EventHandler} method taking that event type; cancelled events skip the handlers
 * with {@code ignoreCancelled}), and gives the records the listener queued.
 */
final class ServerHarness {
    static final UUID SERVER = UUID.fromString("0190a5f2-0000-7000-8000-000000000001");

    final EventQueue queue = new EventQueue(1000);
    final Capture capture;

    ServerHarness() {
        this(WardenConfig.defaults("http://127.0.0.1:8080", "wdn_plugin_x"));
    }

    ServerHarness(WardenConfig config) {
        capture = new Capture(queue, SERVER, config, Clock.systemUTC());
    }

    void fire(Listener listener, Event event) {
        int handled = 0;
        for (Method m : listener.getClass().getMethods()) {
            EventHandler handler = m.getAnnotation(EventHandler.class);
            if (handler == null || m.getParameterCount() != 1 || !m.getParameterTypes()[0].isInstance(event)) {
                continue;
            }
            handled++;
            if (handler.ignoreCancelled() && event instanceof Cancellable c && c.isCancelled()) {
                continue;
            }
            try {
                m.invoke(listener, event);
            } catch (IllegalAccessException e) {
                throw new AssertionError(e);
            } catch (InvocationTargetException e) {
                throw new AssertionError("handler " + m.getName() + " threw", e.getCause());
            }
        }
        if (handled == 0) {
            throw new AssertionError(listener.getClass().getSimpleName() + " has no handler for " + event.getClass().getSimpleName());
        }
    }

    List<WardenRecord> records() {
        return queue.drain(1000);
    }

    /** A player that answers what the listeners ask: id, name, address, protocol version. */
    static Player player(UUID id, String name, String ip, int protocol) {
        return (Player) Proxy.newProxyInstance(ServerHarness.class.getClassLoader(), new Class<?>[] {Player.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getUniqueId" -> id;
                    case "getName" -> name;
                    case "getAddress" -> ip == null ? null : new InetSocketAddress(ip, 25565);
                    case "getProtocolVersion" -> protocol;
                    case "hashCode" -> id.hashCode();
                    case "equals" -> proxy == args[0];
                    case "toString" -> "Player[" + name + "]";
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }
}
