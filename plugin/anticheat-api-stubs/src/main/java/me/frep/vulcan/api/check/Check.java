package me.frep.vulcan.api.check;

/** One of Vulcan's checks as its flag event carries it (the API jar declares more methods). */
public interface Check {
    /** The check's name, lower case (e.g. "speed"). */
    String getName();

    /** The check's letter (e.g. 'a'). */
    char getType();

    /** The player's violation level on this check. */
    int getVl();

    boolean isExperimental();
}
