package space.arim.libertybans.api.punish;

/** Makes draft punishments. */
public interface PunishmentDrafter {
    DraftPunishmentBuilder draftBuilder();
}
