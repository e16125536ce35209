package space.arim.libertybans.api.punish;

import space.arim.omnibus.util.concurrent.ReactionStage;

/** A revoke to carry out ({@code undoPunishment()} is a default method in the real one). */
public interface RevocationOrder {
    /** Lifts it; false when there was nothing active to lift. */
    ReactionStage<Boolean> undoPunishment();
}
