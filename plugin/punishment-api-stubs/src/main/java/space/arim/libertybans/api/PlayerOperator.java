package space.arim.libertybans.api;

import java.util.Objects;
import java.util.UUID;

public final class PlayerOperator extends Operator {
    private final UUID uuid;

    private PlayerOperator(UUID uuid) {
        this.uuid = uuid;
    }

    public static PlayerOperator of(UUID uuid) {
        return new PlayerOperator(Objects.requireNonNull(uuid, "uuid"));
    }

    @Override
    public OperatorType getType() {
        return OperatorType.PLAYER;
    }

    public UUID getUUID() {
        return uuid;
    }
}
