package dev.warden.plugin.paper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.warden.plugin.core.Status;
import dev.warden.plugin.core.integration.Integrations;
import java.lang.reflect.Proxy;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.logging.Logger;
import org.bukkit.command.CommandSender;
import org.junit.jupiter.api.Test;

class WardenCommandTest {
    static CommandSender sender(Set<String> permissions, List<String> out) {
        return (CommandSender) Proxy.newProxyInstance(CommandSender.class.getClassLoader(), new Class<?>[] {CommandSender.class},
                (proxy, m, args) -> switch (m.getName()) {
                    case "hasPermission" -> permissions.contains((String) args[0]);
                    case "sendMessage" -> {
                        out.add((String) args[0]);
                        yield null;
                    }
                    case "getName" -> "tester";
                    default -> throw new UnsupportedOperationException(m.getName());
                });
    }

    final Instant now = Instant.now();
    final Status status = new Status(java.util.UUID.fromString("0190a5f2-0000-7000-8000-000000000001"), "unreachable, retrying", 12, 50_000, 0, 3, 40, 2048, 64L << 20, 0, 1000, 2,
            now.minusSeconds(30), "503 unavailable: retrying in 4 s (attempt 2)", now.minusSeconds(3), now.plusSeconds(4));

    @Test
    void statusShowsConnectionQueueSpoolLastSyncAndLastError() {
        List<String> out = new ArrayList<>();
        int[] reloads = {0};
        Integrations integrations = new Integrations(Logger.getLogger("test"));
        integrations.enable("LuckPerms", "5.4.131", i -> i.sent());
        WardenCommand cmd = new WardenCommand(() -> status, integrations::snapshot, () -> {
            reloads[0]++;
            return List.of();
        });
        cmd.onCommand(sender(Set.of("warden.status"), out), null, "warden", new String[] {"status"});
        String text = String.join("\n", out);
        assertTrue(text.contains("unreachable, retrying"), text);
        assertTrue(text.contains("server id: 0190a5f2-0000-7000-8000-000000000001"), text);
        assertTrue(text.contains("queue: 12 / 50000"), text);
        assertTrue(text.contains("spool: 40 records in 3 batches"), text);
        assertTrue(text.contains("last sync: 30 s ago"), text);
        assertTrue(text.contains("last error: 503 unavailable"), text);
        assertTrue(text.contains("LuckPerms 5.4.131: on, 1 sent"), text);

        out.clear();
        cmd.onCommand(sender(Set.of("warden.status"), out), null, "warden", new String[] {"reload"});
        assertEquals(List.of("You do not have permission (warden.reload)."), out);
        assertEquals(0, reloads[0]);
        out.clear();
        cmd.onCommand(sender(Set.of("warden.reload"), out), null, "warden", new String[] {"reload"});
        assertEquals(1, reloads[0]);
        assertEquals(List.of("Warden: config.yml reloaded."), out);
        out.clear();
        cmd.onCommand(sender(Set.of(), out), null, "warden", new String[] {});
        assertEquals(List.of("You do not have permission (warden.status)."), out);
        assertEquals(List.of("reload"), cmd.onTabComplete(sender(Set.of(), out), null, "warden", new String[] {"re"}));
    }
}
