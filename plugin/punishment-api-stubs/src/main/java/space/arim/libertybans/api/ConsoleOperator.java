package space.arim.libertybans.api;

public final class ConsoleOperator extends Operator {
    public static final ConsoleOperator INSTANCE = new ConsoleOperator();

    private ConsoleOperator() {}

    @Override
    public OperatorType getType() {
        return OperatorType.CONSOLE;
    }
}
