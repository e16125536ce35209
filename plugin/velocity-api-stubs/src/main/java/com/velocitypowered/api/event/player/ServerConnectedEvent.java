package com.velocitypowered.api.event.player;

import com.velocitypowered.api.proxy.Player;
import com.velocitypowered.api.proxy.server.RegisteredServer;
import java.util.Objects;
import java.util.Optional;

public final class ServerConnectedEvent {
    private final Player player;
    private final RegisteredServer server;
    private final RegisteredServer previousServer;

    public ServerConnectedEvent(Player player, RegisteredServer server, RegisteredServer previousServer) {
        this.player = Objects.requireNonNull(player, "player");
        this.server = Objects.requireNonNull(server, "server");
        this.previousServer = previousServer;
    }

    public Player getPlayer() {
        return player;
    }

    public RegisteredServer getServer() {
        return server;
    }

    public Optional<RegisteredServer> getPreviousServer() {
        return Optional.ofNullable(previousServer);
    }
}
