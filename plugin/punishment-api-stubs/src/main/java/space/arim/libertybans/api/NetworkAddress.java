package space.arim.libertybans.api;

public final class NetworkAddress {
    private final byte[] address;

    private NetworkAddress(byte[] address) {
        this.address = address;
    }

    public static NetworkAddress of(byte[] address) {
        if (address.length != 4 && address.length != 16) {
            throw new IllegalArgumentException("Bad address length");
        }
        return new NetworkAddress(address.clone());
    }

    public byte[] getRawAddress() {
        return address.clone();
    }
}
