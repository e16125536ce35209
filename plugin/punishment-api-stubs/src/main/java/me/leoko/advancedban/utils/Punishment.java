package me.leoko.advancedban.utils;

public class Punishment {
    private final String name;
    private final String uuid;
    private final String operator;
    private final String calculation;
    private final long start;
    private final long end;
    private final PunishmentType type;
    private final String reason;
    private final int id;

    /** The real constructor (public there too); called by the tests only. */
    public Punishment(String name, String uuid, String reason, String operator, PunishmentType type, long start,
            long end, String calculation, int id) {
        this.name = name;
        this.uuid = uuid;
        this.reason = reason;
        this.operator = operator;
        this.type = type;
        this.start = start;
        this.end = end;
        this.calculation = calculation;
        this.id = id;
    }

    public String getReason() {
        return reason;
    }

    public String getName() {
        return name;
    }

    public String getUuid() {
        return uuid;
    }

    public String getOperator() {
        return operator;
    }

    public String getCalculation() {
        return calculation;
    }

    public long getStart() {
        return start;
    }

    public long getEnd() {
        return end;
    }

    public PunishmentType getType() {
        return type;
    }

    public int getId() {
        return id;
    }

    /**
     * Stores it (the real one writes AdvancedBan's database, sets the id, kicks or tells the
     * player and fires {@code PunishmentEvent}); {@code silent}: no broadcast to staff.
     */
    public void create(boolean silent) {
        throw new UnsupportedOperationException("AdvancedBan is not running");
    }

    /**
     * Lifts it (the real one deletes it from AdvancedBan's database and fires {@code
     * RevokePunishmentEvent}); {@code who} null: no notification.
     */
    public void delete(String who, boolean massClear, boolean removeCache) {
        throw new UnsupportedOperationException("AdvancedBan is not running");
    }
}
