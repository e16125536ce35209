package space.arim.libertybans.api;

public abstract class Victim {
    Victim() {}

    public abstract VictimType getType();

    public enum VictimType {
        PLAYER,
        ADDRESS,
        COMPOSITE
    }
}
