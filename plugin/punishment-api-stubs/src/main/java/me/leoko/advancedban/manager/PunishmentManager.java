package me.leoko.advancedban.manager;

import me.leoko.advancedban.utils.Punishment;

/** AdvancedBan's punishment store (a singleton in the real plugin). */
public class PunishmentManager {
    /** The running plugin's manager; the stub has none. */
    public static synchronized PunishmentManager get() {
        throw new UnsupportedOperationException("AdvancedBan is not running");
    }

    /** The punishment of this id while it is active, else null. */
    public Punishment getPunishment(int id) {
        throw new UnsupportedOperationException("AdvancedBan is not running");
    }

    /** The player's active ban (by AdvancedBan's UUID string, without dashes), else null. */
    public Punishment getBan(String uuid) {
        throw new UnsupportedOperationException("AdvancedBan is not running");
    }

    /** The player's active mute, else null. */
    public Punishment getMute(String uuid) {
        throw new UnsupportedOperationException("AdvancedBan is not running");
    }
}
