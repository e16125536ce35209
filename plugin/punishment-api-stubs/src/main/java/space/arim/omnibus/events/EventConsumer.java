package space.arim.omnibus.events;

import java.util.function.Consumer;

public interface EventConsumer<E extends Event> extends Consumer<E> {
    @Override
    void accept(E event);
}
