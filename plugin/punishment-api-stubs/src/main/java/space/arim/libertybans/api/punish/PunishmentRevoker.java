package space.arim.libertybans.api.punish;

import space.arim.libertybans.api.PunishmentType;
import space.arim.libertybans.api.Victim;

/** Makes revocation orders. */
public interface PunishmentRevoker {
    RevocationOrder revokeById(long id);

    RevocationOrder revokeByTypeAndVictim(PunishmentType type, Victim victim);
}
