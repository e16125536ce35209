package dev.warden.plugin.core.proxy;

import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.UUID;
import java.util.logging.Logger;

/**
 * A proxy's map of backend name (as the proxy names it) to that backend's Warden server id, as
 * announced by the backend; kept in the data folder ({@code backends.properties}) so a restarted
 * proxy knows its backends before they announce themselves again. Safe from any thread.
 */
public final class BackendIds {
    public static final String FILE_NAME = "backends.properties";

    private final Path file;
    private final Logger logger;
    private final Map<String, UUID> ids = new TreeMap<>();

    private BackendIds(Path file, Logger logger) {
        this.file = file;
        this.logger = logger;
    }

    /** Reads the file when there is one; an unreadable line is skipped (the backend announces again). */
    public static BackendIds load(Path dataFolder, Logger logger) throws IOException {
        BackendIds out = new BackendIds(dataFolder.resolve(FILE_NAME), logger);
        if (Files.exists(out.file)) {
            Properties p = new Properties();
            try (Reader r = Files.newBufferedReader(out.file, StandardCharsets.UTF_8)) {
                p.load(r);
            }
            for (String name : p.stringPropertyNames()) {
                try {
                    out.ids.put(name, UUID.fromString(p.getProperty(name).strip()));
                } catch (IllegalArgumentException e) {
                    logger.warning(FILE_NAME + ": backend " + name + " has no valid server id; waiting for it to announce one");
                }
            }
        }
        return out;
    }

    /** The backend's announced server id, or null when it never announced one. */
    public synchronized UUID get(String backend) {
        return ids.get(backend);
    }

    /** Records an announcement; writes the file when the id is new or changed. */
    public synchronized void put(String backend, UUID serverId) {
        if (serverId.equals(ids.put(backend, serverId))) {
            return;
        }
        Properties p = new Properties();
        ids.forEach((name, id) -> p.setProperty(name, id.toString()));
        try {
            Files.createDirectories(file.getParent());
            Path tmp = file.resolveSibling(FILE_NAME + ".tmp");
            try (Writer w = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
                p.store(w, "Backend name = its Warden server id, as each backend announced it");
            }
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            logger.warning("cannot write " + file + " (" + e.getMessage() + "); the backend ids are kept until restart");
        }
    }

    /**
     * The id a backend's sessions get when it never announced one (it does not run Warden, or not
     * with {@code proxy: true}): stable across restarts, derived from the proxy's id and the name.
     */
    public static UUID fallback(UUID proxyId, String backend) {
        return UUID.nameUUIDFromBytes(("warden-backend:" + proxyId + ":" + backend).getBytes(StandardCharsets.UTF_8));
    }
}
