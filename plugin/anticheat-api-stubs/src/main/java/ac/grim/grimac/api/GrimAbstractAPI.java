package ac.grim.grimac.api;

import ac.grim.grimac.api.event.EventBus;

/** In GrimAPI it also extends ConfigReloadable and BasicReloadable. */
public interface GrimAbstractAPI {
    EventBus getEventBus();

    String getGrimVersion();
}
