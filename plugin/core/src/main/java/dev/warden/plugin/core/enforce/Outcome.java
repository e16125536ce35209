package dev.warden.plugin.core.enforce;

/** What a server did with an action, as acknowledged to the service. */
public enum Outcome {
    /** Enforced here (a ban or mute is on the local list; a kick or warning reached the player). */
    APPLIED("applied"),
    /** A kick or warning whose player is not on this server. */
    NOT_ONLINE("not_online"),
    /** Not for this server (another server group's scope), too old to act on, or nothing to lift. */
    SKIPPED("skipped"),
    /** The platform could not apply it. */
    FAILED("failed");

    private final String wire;

    Outcome(String wire) {
        this.wire = wire;
    }

    public String wire() {
        return wire;
    }
}
