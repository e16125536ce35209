package ac.grim.grimac.api;

/** In GrimAPI it also extends ConfigReloadable, BasicReloadable and UserHandlerHolder. */
public interface GrimUser extends GrimIdentity {
    String getName();

    /** The round trip of Grim's transaction packets, in milliseconds. */
    int getTransactionPing();
}
