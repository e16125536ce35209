package space.arim.omnibus;

import space.arim.omnibus.events.EventBus;
import space.arim.omnibus.registry.Registry;

public interface Omnibus {
    EventBus getEventBus();

    Registry getRegistry();
}
