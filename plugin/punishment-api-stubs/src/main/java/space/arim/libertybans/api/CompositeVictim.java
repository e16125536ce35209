package space.arim.libertybans.api;

import java.util.Objects;
import java.util.UUID;

public final class CompositeVictim extends Victim {
    public static final UUID WILDCARD_UUID = new UUID(0, 0);
    private final UUID uuid;
    private final NetworkAddress address;

    private CompositeVictim(UUID uuid, NetworkAddress address) {
        this.uuid = Objects.requireNonNull(uuid, "uuid");
        this.address = Objects.requireNonNull(address, "address");
    }

    public static CompositeVictim of(UUID uuid, NetworkAddress address) {
        return new CompositeVictim(uuid, address);
    }

    @Override
    public VictimType getType() {
        return VictimType.COMPOSITE;
    }

    public UUID getUUID() {
        return uuid;
    }

    public NetworkAddress getAddress() {
        return address;
    }
}
