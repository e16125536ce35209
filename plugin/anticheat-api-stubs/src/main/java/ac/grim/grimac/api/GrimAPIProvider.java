package ac.grim.grimac.api;

/** Where Grim publishes its API once it has started. */
public final class GrimAPIProvider {
    private static GrimAbstractAPI instance;

    private GrimAPIProvider() {}

    /** Called by Grim itself when it starts; throws when called twice. */
    public static void init(GrimAbstractAPI api) {
        if (instance != null) {
            throw new IllegalStateException("GrimAPI is already initialized");
        }
        instance = api;
    }

    /** The API; throws IllegalStateException while Grim has not started. */
    public static GrimAbstractAPI get() {
        if (instance == null) {
            throw new IllegalStateException("GrimAPI is not loaded. Ensure the Grim mod is installed and initialized.");
        }
        return instance;
    }
}
