package space.arim.libertybans.api;

import java.util.Objects;
import java.util.UUID;

public final class PlayerVictim extends Victim {
    private final UUID uuid;

    private PlayerVictim(UUID uuid) {
        this.uuid = Objects.requireNonNull(uuid, "uuid");
    }

    public static PlayerVictim of(UUID uuid) {
        return new PlayerVictim(uuid);
    }

    @Override
    public VictimType getType() {
        return VictimType.PLAYER;
    }

    public UUID getUUID() {
        return uuid;
    }
}
