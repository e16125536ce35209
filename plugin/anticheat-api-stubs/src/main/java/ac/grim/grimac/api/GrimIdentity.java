package ac.grim.grimac.api;

import java.util.UUID;

public interface GrimIdentity {
    UUID getUniqueId();
}
