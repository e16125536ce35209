package dev.warden.plugin.core.enforce;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.UUID;

/**
 * What the feed keeps in the data folder ({@code enforcement.json}), written atomically (a temporary
 * file moved over the old one) after each page of actions is applied: the cursor, the ids of the
 * actions applied (the newest {@link #MAX_APPLIED}), the acks not yet accepted, the ban and
 * mute lists (with each ban's appeal link), and the links of dashboard punishments applied through
 * a punishment plugin ({@link BridgeLinks}). Used by the feed's thread only (and by the platform on load).
 */
public final class FeedState {
    public static final String FILE_NAME = "enforcement.json";
    static final int MAX_APPLIED = 10_000;

    /** One acknowledgement waiting to be sent. */
    public record Ack(UUID actionId, Outcome outcome, String detail, Instant at) {}

    private final Path file;
    private final BridgeLinks links;
    String cursor;
    final LinkedHashSet<UUID> applied = new LinkedHashSet<>();
    final List<Ack> pendingAcks = new ArrayList<>();
    volatile String lastAction;
    volatile Instant lastActionAt;

    private FeedState(Path file, BridgeLinks links) {
        this.file = file;
        this.links = links;
    }

    /** Loads the state (and fills {@code sanctions}); a missing file is a first run. */
    public static FeedState load(Path dataFolder, Sanctions sanctions) throws IOException {
        return load(dataFolder, sanctions, new BridgeLinks(java.time.Clock.systemUTC()));
    }

    /** Loads the state (and fills {@code sanctions} and {@code links}); a missing file is a first run. */
    public static FeedState load(Path dataFolder, Sanctions sanctions, BridgeLinks links) throws IOException {
        FeedState s = new FeedState(dataFolder.resolve(FILE_NAME), links);
        if (!Files.exists(s.file)) {
            return s;
        }
        try {
            JsonObject o = JsonParser.parseString(Files.readString(s.file, StandardCharsets.UTF_8)).getAsJsonObject();
            s.cursor = Action.string(o, "cursor");
            for (JsonElement e : array(o, "applied")) {
                s.applied.add(UUID.fromString(e.getAsString()));
            }
            for (JsonElement e : array(o, "pending_acks")) {
                JsonObject a = e.getAsJsonObject();
                s.pendingAcks.add(new Ack(UUID.fromString(a.get("action_id").getAsString()),
                        Outcome.valueOf(a.get("outcome").getAsString()), Action.string(a, "detail"),
                        Instant.parse(a.get("at").getAsString())));
            }
            List<Sanctions.Entry> entries = new ArrayList<>();
            for (JsonElement e : array(o, "sanctions")) {
                JsonObject x = e.getAsJsonObject();
                String expires = Action.string(x, "expires_at");
                entries.add(new Sanctions.Entry(UUID.fromString(x.get("punishment_id").getAsString()),
                        x.get("type").getAsString(), UUID.fromString(x.get("player_uuid").getAsString()),
                        Action.string(x, "player_name"), Action.string(x, "reason"),
                        expires == null ? null : Instant.parse(expires), Instant.parse(x.get("issued_at").getAsString()),
                        // Absent from files written before appeal links: the feed fetches one.
                        AppealLink.of(Action.string(x, "appeal_url"), Action.string(x, "appeal_expires_at"))));
            }
            sanctions.replaceAll(entries);
            // Absent from files written before punishment-plugin links: none.
            List<BridgeLinks.Link> linked = new ArrayList<>();
            for (JsonElement e : array(o, "links")) {
                JsonObject x = e.getAsJsonObject();
                linked.add(new BridgeLinks.Link(UUID.fromString(x.get("punishment_id").getAsString()),
                        x.get("source_plugin").getAsString(), x.get("type").getAsString(),
                        UUID.fromString(x.get("player_uuid").getAsString()), Action.string(x, "external_id")));
            }
            links.replaceAll(linked);
            s.lastAction = Action.string(o, "last_action");
            String at = Action.string(o, "last_action_at");
            s.lastActionAt = at == null ? null : Instant.parse(at);
        } catch (JsonParseException | IllegalStateException | IllegalArgumentException | NullPointerException
                | java.time.DateTimeException e) {
            throw new IOException(s.file + " is damaged (" + e.getMessage() + "); delete it to read the feed from the start", e);
        }
        return s;
    }

    private static JsonArray array(JsonObject o, String key) {
        return o.has(key) && o.get(key).isJsonArray() ? o.getAsJsonArray(key) : new JsonArray();
    }

    void markApplied(UUID id) {
        applied.add(id);
        Iterator<UUID> it = applied.iterator();
        while (applied.size() > MAX_APPLIED && it.hasNext()) {
            it.next();
            it.remove();
        }
    }

    /** Writes the state atomically. */
    void save(Sanctions sanctions) throws IOException {
        JsonObject o = new JsonObject();
        o.addProperty("version", 1);
        if (cursor != null) {
            o.addProperty("cursor", cursor);
        }
        JsonArray ids = new JsonArray();
        applied.forEach(id -> ids.add(id.toString()));
        o.add("applied", ids);
        JsonArray acks = new JsonArray();
        for (Ack a : pendingAcks) {
            JsonObject x = new JsonObject();
            x.addProperty("action_id", a.actionId().toString());
            x.addProperty("outcome", a.outcome().name());
            if (a.detail() != null) {
                x.addProperty("detail", a.detail());
            }
            x.addProperty("at", a.at().toString());
            acks.add(x);
        }
        o.add("pending_acks", acks);
        JsonArray list = new JsonArray();
        for (Sanctions.Entry e : sanctions.entries()) {
            JsonObject x = new JsonObject();
            x.addProperty("punishment_id", e.punishmentId().toString());
            x.addProperty("type", e.type());
            x.addProperty("player_uuid", e.player().toString());
            x.addProperty("player_name", e.playerName());
            x.addProperty("reason", e.reason());
            x.addProperty("expires_at", e.expiresAt() == null ? null : e.expiresAt().toString());
            x.addProperty("issued_at", e.issuedAt().toString());
            if (e.appeal() != null) {
                x.addProperty("appeal_url", e.appeal().url());
                x.addProperty("appeal_expires_at", e.appeal().expiresAt().toString());
            }
            list.add(x);
        }
        o.add("sanctions", list);
        links.takeChanged();
        JsonArray linked = new JsonArray();
        for (BridgeLinks.Link l : links.links()) {
            JsonObject x = new JsonObject();
            x.addProperty("punishment_id", l.punishmentId().toString());
            x.addProperty("source_plugin", l.source());
            x.addProperty("type", l.type());
            x.addProperty("player_uuid", l.player().toString());
            if (l.externalId() != null) {
                x.addProperty("external_id", l.externalId());
            }
            linked.add(x);
        }
        o.add("links", linked);
        if (lastAction != null) {
            o.addProperty("last_action", lastAction);
            o.addProperty("last_action_at", lastActionAt.toString());
        }
        Files.createDirectories(file.getParent());
        Path tmp = file.resolveSibling(FILE_NAME + ".tmp");
        Files.writeString(tmp, o.toString(), StandardCharsets.UTF_8);
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /** The links of dashboard punishments applied through a punishment plugin. */
    public BridgeLinks links() {
        return links;
    }

    public String cursor() {
        return cursor;
    }

    public boolean applied(UUID id) {
        return applied.contains(id);
    }

    public int pendingAcks() {
        return pendingAcks.size();
    }
}
