package space.arim.libertybans.api;

public enum PunishmentType {
    BAN,
    MUTE,
    WARN,
    KICK
}
