package dev.warden.plugin.paper.luckperms;

import dev.warden.plugin.core.Capture;
import dev.warden.plugin.core.integration.Integration;
import net.luckperms.api.LuckPerms;
import net.luckperms.api.LuckPermsProvider;
import net.luckperms.api.event.node.NodeAddEvent;
import net.luckperms.api.event.node.NodeMutateEvent;
import net.luckperms.api.event.node.NodeRemoveEvent;
import net.luckperms.api.model.user.User;
import net.luckperms.api.node.Node;
import net.luckperms.api.node.types.InheritanceNode;
import org.bukkit.plugin.Plugin;

/**
 * Rank changes from LuckPerms: a group added to or removed from a player (an inheritance node),
 * on the server where the change was made. Loaded only when LuckPerms is enabled; this class is the
 * only one that names LuckPerms' API, so the plugin runs without it.
 */
public final class LuckPermsIntegration {
    private LuckPermsIntegration() {}

    public static void enable(Plugin plugin, Capture capture, Integration integration) {
        LuckPerms luckPerms = LuckPermsProvider.get();
        luckPerms.getEventBus().subscribe(plugin, NodeAddEvent.class,
                integration.guard("a group added", e -> handle(capture, integration, e, e.getNode(), "add")));
        luckPerms.getEventBus().subscribe(plugin, NodeRemoveEvent.class,
                integration.guard("a group removed", e -> handle(capture, integration, e, e.getNode(), "remove")));
    }

    static void handle(Capture capture, Integration integration, NodeMutateEvent event, Node node, String action) {
        if (!event.isUser() || !(node instanceof InheritanceNode inheritance)) {
            return;
        }
        User user = (User) event.getTarget();
        capture.rankChange(user.getUniqueId(), user.getUsername(), action, inheritance.getGroupName(), null,
                node.hasExpiry() ? node.getExpiry() : null);
        integration.sent();
    }
}
