package space.arim.omnibus.registry;

import java.util.Optional;

public interface Registry {
    <T> Optional<T> getProvider(Class<T> service);
}
