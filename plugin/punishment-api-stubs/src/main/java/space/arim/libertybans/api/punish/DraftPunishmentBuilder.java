package space.arim.libertybans.api.punish;

import java.time.Duration;
import space.arim.libertybans.api.PunishmentType;
import space.arim.libertybans.api.Victim;

/**
 * Builds a draft punishment (the real one extends {@code DraftSanctionBuilder} and redeclares
 * these methods on this interface for its 1.0 API compatibility). The operator is the console
 * unless set; a zero duration is permanent.
 */
public interface DraftPunishmentBuilder {
    DraftPunishmentBuilder type(PunishmentType type);

    DraftPunishmentBuilder victim(Victim victim);

    DraftPunishmentBuilder reason(String reason);

    DraftPunishmentBuilder duration(Duration duration);

    DraftPunishment build();
}
