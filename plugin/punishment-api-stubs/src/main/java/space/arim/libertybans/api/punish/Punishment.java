package space.arim.libertybans.api.punish;

import java.time.Instant;

public interface Punishment extends PunishmentBase {
    Instant PERMANENT_END_DATE = Instant.MAX;

    long getIdentifier();

    Instant getStartDate();

    Instant getEndDate();
}
