package ac.grim.grimac.api.event.events;

import ac.grim.grimac.api.AbstractCheck;
import ac.grim.grimac.api.GrimUser;
import ac.grim.grimac.api.event.GrimEvent;

/** In GrimAPI it also implements GrimUserEvent and Cancellable. */
public abstract class GrimCheckEvent extends GrimEvent {
    private final GrimUser user;
    protected final AbstractCheck check;

    public GrimCheckEvent(GrimUser user, AbstractCheck check) {
        super(true); // async: Grim fires check events off the server thread
        this.user = user;
        this.check = check;
    }

    public GrimUser getUser() {
        return user;
    }

    public AbstractCheck getCheck() {
        return check;
    }

    public double getViolations() {
        return check.getViolations();
    }
}
