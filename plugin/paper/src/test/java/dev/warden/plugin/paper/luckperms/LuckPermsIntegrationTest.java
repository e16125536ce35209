package dev.warden.plugin.paper.luckperms;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.warden.plugin.core.Capture;
import dev.warden.plugin.core.EventQueue;
import dev.warden.plugin.core.Records;
import dev.warden.plugin.core.WardenConfig;
import dev.warden.plugin.core.WardenRecord;
import dev.warden.plugin.core.integration.Integration;
import dev.warden.plugin.core.integration.Integrations;
import java.lang.reflect.Proxy;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.logging.Logger;
import net.luckperms.api.event.node.NodeAddEvent;
import net.luckperms.api.event.node.NodeRemoveEvent;
import net.luckperms.api.model.PermissionHolder;
import net.luckperms.api.model.user.User;
import net.luckperms.api.node.Node;
import net.luckperms.api.node.types.InheritanceNode;
import net.luckperms.api.node.types.PermissionNode;
import org.junit.jupiter.api.Test;

/** LuckPerms' node events, as its event bus hands them over, and the rank-change record. */
class LuckPermsIntegrationTest {
    static final UUID ID = UUID.fromString("069a79f4-44e9-4726-a5be-fca90e38aaf5");

    /** An instance of {@code type} answering the given methods (LuckPerms' API is interfaces). */
    @SuppressWarnings("unchecked")
    static <T> T answering(Class<T> type, Map<String, Object> answers) {
        return (T) Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (proxy, m, args) -> {
            if (answers.containsKey(m.getName())) {
                return answers.get(m.getName());
            }
            throw new UnsupportedOperationException(m.getName());
        });
    }

    final EventQueue queue = new EventQueue(100);
    final Capture capture = new Capture(queue, UUID.randomUUID(),
            WardenConfig.defaults("http://x", "wdn_plugin_x"), Clock.systemUTC());
    final Integration integration = new Integrations(Logger.getLogger("test")).enable("LuckPerms", "5.4", i -> {});
    final User user = answering(User.class, Map.of("getUniqueId", ID, "getUsername", "notch"));

    @Test
    void groupAddedAndRemoved() {
        Instant expiry = Instant.parse("2030-01-01T00:00:00Z");
        InheritanceNode vip = answering(InheritanceNode.class,
                Map.of("getGroupName", "vip", "hasExpiry", true, "getExpiry", expiry));
        NodeAddEvent add = answering(NodeAddEvent.class, Map.of("isUser", true, "getTarget", user, "getNode", vip));
        LuckPermsIntegration.handle(capture, integration, add, add.getNode(), "add");

        InheritanceNode mod = answering(InheritanceNode.class, Map.of("getGroupName", "mod", "hasExpiry", false));
        NodeRemoveEvent remove = answering(NodeRemoveEvent.class, Map.of("isUser", true, "getTarget", user, "getNode", mod));
        LuckPermsIntegration.handle(capture, integration, remove, remove.getNode(), "remove");

        List<WardenRecord> records = queue.drain(10);
        assertEquals(2, records.size());
        assertEquals(2, integration.snapshot().sent());
        Records.RankChange added = (Records.RankChange) records.get(0);
        assertEquals(ID, added.playerUuid());
        assertEquals("notch", added.playerName());
        assertEquals("add", added.action());
        assertEquals("vip", added.group());
        assertEquals(expiry, added.expiresAt());
        assertNull(added.serverId(), "network-wide");
        Records.RankChange removed = (Records.RankChange) records.get(1);
        assertEquals("remove", removed.action());
        assertEquals("mod", removed.group());
        assertNull(removed.expiresAt());
    }

    @Test
    void permissionsAndGroupsOfGroupsAreNotRankChanges() {
        Node permission = answering(PermissionNode.class, Map.of());
        NodeAddEvent add = answering(NodeAddEvent.class, Map.of("isUser", true, "getTarget", user, "getNode", permission));
        LuckPermsIntegration.handle(capture, integration, add, permission, "add");
        InheritanceNode vip = answering(InheritanceNode.class, Map.of("getGroupName", "vip", "hasExpiry", false));
        PermissionHolder group = answering(PermissionHolder.class, Map.of());
        NodeAddEvent onGroup = answering(NodeAddEvent.class, Map.of("isUser", false, "getTarget", group, "getNode", vip));
        LuckPermsIntegration.handle(capture, integration, onGroup, vip, "add");
        assertTrue(queue.drain(10).isEmpty());
    }
}
