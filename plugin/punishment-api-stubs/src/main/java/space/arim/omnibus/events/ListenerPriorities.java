package space.arim.omnibus.events;

public final class ListenerPriorities {
    public static final byte LOWEST = (byte) -96;
    public static final byte LOWER = (byte) -64;
    public static final byte LOW = (byte) -32;
    public static final byte NORMAL = (byte) 0;
    public static final byte HIGH = (byte) 31;
    public static final byte HIGHER = (byte) 63;
    public static final byte HIGHEST = (byte) 95;

    private ListenerPriorities() {}
}
