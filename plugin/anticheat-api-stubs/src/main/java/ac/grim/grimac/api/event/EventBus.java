package ac.grim.grimac.api.event;

/**
 * The class-keyed subscription: present from GrimAPI 1.2 (a default method there) to 1.6, where
 * it is deprecated in favour of the typed channels but kept for callers built against 1.2.
 */
public interface EventBus {
    <T extends GrimEvent> void subscribe(Object pluginContext, Class<T> eventType, GrimEventListener<T> listener);
}
