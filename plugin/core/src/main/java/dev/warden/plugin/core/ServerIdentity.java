package dev.warden.plugin.core;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.UUID;

/**
 * The server's id: made once and kept in the data folder ({@code server-id}), so the dashboard
 * sees one server across restarts. A copied data folder copies the id: delete the file on the copy.
 */
public final class ServerIdentity {
    public static final String FILE_NAME = "server-id";

    private ServerIdentity() {}

    public static UUID loadOrCreate(Path dataFolder) throws IOException {
        Path file = dataFolder.resolve(FILE_NAME);
        if (Files.exists(file)) {
            String text = Files.readString(file, StandardCharsets.UTF_8).strip();
            try {
                return UUID.fromString(text);
            } catch (IllegalArgumentException e) {
                throw new IOException(file + " does not hold a UUID; delete it to make a new server id", e);
            }
        }
        Files.createDirectories(dataFolder);
        UUID id = UuidV7.at(Instant.now());
        Path tmp = dataFolder.resolve(FILE_NAME + ".tmp");
        Files.writeString(tmp, id + "\n", StandardCharsets.UTF_8);
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        return id;
    }
}
