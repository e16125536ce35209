package dev.warden.plugin.core.enforce;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.UUID;

/**
 * One dashboard action from the feed ({@code GET /api/plugin/actions}): an issue of a punishment
 * or a revoke of one. Only the fields enforcement needs are read; unknown fields are ignored.
 */
public record Action(
        String cursor,
        UUID id,
        String type,
        Issue punishment,
        Revoke revoke,
        String byName,
        Instant at) {

    /**
     * {@code type: "issue"}: the punishment to enforce. {@code expiresAt} null = permanent; {@code appeal}
     * (a ban's link to the appeal form) null when the feed gave none.
     */
    public record Issue(String type, UUID playerUuid, String playerName, String reason, Instant expiresAt, String scope,
            AppealLink appeal) {}

    /** {@code type: "revoke"}: the punishment to lift, with its source plugin and id there. */
    public record Revoke(UUID punishmentId, UUID playerUuid, String type, String sourcePlugin, String externalId,
            String reason) {}

    public boolean isIssue() {
        return "issue".equals(type) && punishment != null;
    }

    public boolean isRevoke() {
        return "revoke".equals(type) && revoke != null;
    }

    /** Parses one element of the feed's {@code actions}; throws IllegalArgumentException when malformed. */
    public static Action parse(JsonElement element) {
        try {
            JsonObject o = element.getAsJsonObject();
            String type = string(o, "type");
            Issue issue = null;
            Revoke revoke = null;
            if (o.has("punishment") && o.get("punishment").isJsonObject()) {
                JsonObject p = o.getAsJsonObject("punishment");
                issue = new Issue(string(p, "type"), UUID.fromString(string(p, "player_uuid")), string(p, "player_name"),
                        string(p, "reason"), instant(p, "expires_at"),
                        string(p, "scope") == null ? "global" : string(p, "scope"), AppealLink.parse(o.get("appeal")));
            }
            if (o.has("revoke") && o.get("revoke").isJsonObject()) {
                JsonObject r = o.getAsJsonObject("revoke");
                String player = string(r, "player_uuid");
                revoke = new Revoke(UUID.fromString(string(r, "punishment_id")),
                        player == null ? null : UUID.fromString(player), string(r, "type"),
                        string(r, "source_plugin"), string(r, "external_id"), string(r, "reason"));
            }
            String by = o.has("by") && o.get("by").isJsonObject() ? string(o.getAsJsonObject("by"), "name") : null;
            return new Action(string(o, "cursor"), UUID.fromString(string(o, "id")), type, issue, revoke, by,
                    instant(o, "at"));
        } catch (IllegalStateException | NullPointerException | ClassCastException | DateTimeParseException e) {
            throw new IllegalArgumentException("malformed action: " + e.getMessage(), e);
        }
    }

    static String string(JsonObject o, String key) {
        JsonElement e = o.get(key);
        return e == null || e.isJsonNull() ? null : e.getAsString();
    }

    static Instant instant(JsonObject o, String key) {
        String s = string(o, key);
        return s == null ? null : java.time.OffsetDateTime.parse(s).toInstant();
    }
}
