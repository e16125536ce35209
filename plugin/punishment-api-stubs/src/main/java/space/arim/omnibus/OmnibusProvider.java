package space.arim.omnibus;

public final class OmnibusProvider {
    private OmnibusProvider() {}

    public static Omnibus getOmnibus() {
        throw new IllegalStateException("compile-only surface: Omnibus is not loaded");
    }
}
