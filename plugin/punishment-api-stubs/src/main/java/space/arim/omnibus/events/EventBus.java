package space.arim.omnibus.events;

public interface EventBus {
    <E extends Event> RegisteredListener registerListener(Class<E> eventClass, byte priority,
            EventConsumer<? super E> eventConsumer);

    void unregisterListener(RegisteredListener listener);
}
