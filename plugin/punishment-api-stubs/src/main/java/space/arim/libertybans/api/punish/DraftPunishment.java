package space.arim.libertybans.api.punish;

import java.util.Optional;
import space.arim.omnibus.util.concurrent.ReactionStage;

/**
 * A punishment not yet enacted (the real one extends {@code PunishmentBase} and {@code
 * DraftSanction}; {@code enactPunishment()} is a default method there).
 */
public interface DraftPunishment {
    /** Stores and enforces it; an empty optional when the victim already has an active ban or mute. */
    ReactionStage<Optional<Punishment>> enactPunishment();
}
