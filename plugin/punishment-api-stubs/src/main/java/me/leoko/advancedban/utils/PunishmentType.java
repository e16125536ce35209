package me.leoko.advancedban.utils;

public enum PunishmentType {
    BAN,
    TEMP_BAN,
    IP_BAN,
    TEMP_IP_BAN,
    MUTE,
    TEMP_MUTE,
    WARNING,
    TEMP_WARNING,
    KICK,
    NOTE
}
