package ac.grim.grimac.api.event;

public abstract class GrimEvent {
    private final boolean async;

    protected GrimEvent(boolean async) {
        this.async = async;
    }
}
