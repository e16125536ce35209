package space.arim.libertybans.api;

public abstract class Operator {
    Operator() {}

    public abstract OperatorType getType();

    public enum OperatorType {
        PLAYER,
        CONSOLE
    }
}
