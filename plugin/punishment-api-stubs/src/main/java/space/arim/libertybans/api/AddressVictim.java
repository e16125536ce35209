package space.arim.libertybans.api;

import java.util.Objects;

public final class AddressVictim extends Victim {
    private final NetworkAddress address;

    private AddressVictim(NetworkAddress address) {
        this.address = Objects.requireNonNull(address, "address");
    }

    public static AddressVictim of(NetworkAddress address) {
        return new AddressVictim(address);
    }

    @Override
    public VictimType getType() {
        return VictimType.ADDRESS;
    }

    public NetworkAddress getAddress() {
        return address;
    }
}
