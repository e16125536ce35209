package dev.warden.plugin.core;

import com.google.gson.JsonObject;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.UUID;

/**
 * The records of the contract (§5). Field names are the contract's; optional fields are left out
 * when null. Texts are clipped to the contract's lengths when the record is made ({@link Text}).
 */
public final class Records {
    private Records() {}

    static String time(Instant t) {
        return t.truncatedTo(ChronoUnit.MICROS).toString();
    }

    private static void put(JsonObject o, String key, String value) {
        if (value != null) {
            o.addProperty(key, value);
        }
    }

    private static void put(JsonObject o, String key, UUID value) {
        if (value != null) {
            o.addProperty(key, value.toString());
        }
    }

    private static void put(JsonObject o, String key, Instant value) {
        if (value != null) {
            o.addProperty(key, time(value));
        }
    }

    /**
     * Server status; {@code online} false only on a clean shutdown; {@code role} "proxy" for a
     * proxy, null (left out) for a game server.
     */
    public record Heartbeat(UUID id, UUID serverId, double tps, int playerCount, int maxPlayers,
            Instant timestamp, String name, String version, double memoryUsedMb,
            double memoryMaxMb, boolean online, String role) implements WardenRecord {
        /** A game server's heartbeat (no role). */
        public Heartbeat(UUID id, UUID serverId, double tps, int playerCount, int maxPlayers,
                Instant timestamp, String name, String version, double memoryUsedMb,
                double memoryMaxMb, boolean online) {
            this(id, serverId, tps, playerCount, maxPlayers, timestamp, name, version, memoryUsedMb,
                    memoryMaxMb, online, null);
        }

        public Heartbeat {
            tps = clamp(tps, 0, 1000);
            memoryUsedMb = clamp(memoryUsedMb, 0, 1e9);
            memoryMaxMb = clamp(memoryMaxMb, 0, 1e9);
            playerCount = Math.max(0, playerCount);
            maxPlayers = Math.max(0, maxPlayers);
            name = Text.clip(name, 128);
            version = Text.clip(version, 128);
        }

        @Override
        public RecordKind kind() {
            return RecordKind.HEARTBEAT;
        }

        @Override
        public JsonObject toJson() {
            JsonObject o = new JsonObject();
            put(o, "id", id);
            put(o, "server_id", serverId);
            o.addProperty("tps", Math.round(tps * 100.0) / 100.0);
            o.addProperty("player_count", playerCount);
            o.addProperty("max_players", maxPlayers);
            put(o, "timestamp", timestamp);
            put(o, "name", name);
            put(o, "version", version);
            o.addProperty("memory_used_mb", Math.round(memoryUsedMb * 10.0) / 10.0);
            o.addProperty("memory_max_mb", Math.round(memoryMaxMb * 10.0) / 10.0);
            o.addProperty("online", online);
            put(o, "role", role);
            return o;
        }
    }

    /** A chat line or a command; {@code entryType} is "chat" or "command". */
    public record Chat(UUID id, UUID serverId, UUID playerUuid, String playerName, String entryType,
            String message, String channel, Instant sentAt) implements WardenRecord {
        public Chat {
            playerName = Text.clip(playerName, 64);
            message = Text.clip(message, 4096);
            channel = Text.clip(channel, 64);
        }

        @Override
        public RecordKind kind() {
            return RecordKind.CHAT;
        }

        @Override
        public JsonObject toJson() {
            JsonObject o = new JsonObject();
            put(o, "id", id);
            put(o, "server_id", serverId);
            put(o, "player_uuid", playerUuid);
            put(o, "player_name", playerName);
            put(o, "entry_type", entryType);
            // A message that was only NUL characters: the contract needs 1..=4096 characters.
            put(o, "message", message == null ? "\uFFFD" : message);
            put(o, "channel", channel);
            put(o, "sent_at", sentAt);
            return o;
        }
    }

    /**
     * A punishment issued (ban, mute, kick, warning) or revoked. A revoke names the punishment it
     * ends by {@code externalId} (with {@code sourcePlugin} and {@code type}) or by {@code
     * punishmentId} (the issuing record's id); its staff, time and {@code revokeReason} are the
     * revoke's.
     */
    public record Punishment(UUID id, UUID serverId, UUID playerUuid, String playerName, String type,
            String action, String reason, UUID staffUuid, String staffName, Instant issuedAt,
            Instant expiresAt, Boolean ipBased, String scope, String sourcePlugin, String externalId,
            UUID punishmentId, String revokeReason) implements WardenRecord {
        public Punishment {
            playerName = Text.clip(playerName, 64);
            reason = Text.clip(reason, 2048);
            revokeReason = Text.clip(revokeReason, 2048);
            staffName = Text.clip(staffName, 64);
            scope = Text.clip(scope, 64);
            sourcePlugin = Text.clip(sourcePlugin, 64);
            externalId = Text.clip(externalId, 128);
            if (expiresAt != null && issuedAt != null && !expiresAt.isAfter(issuedAt)) {
                expiresAt = issuedAt.plusSeconds(1);
            }
        }

        /** An issue, or a revoke named by {@code externalId} only. */
        public Punishment(UUID id, UUID serverId, UUID playerUuid, String playerName, String type,
                String action, String reason, UUID staffUuid, String staffName, Instant issuedAt,
                Instant expiresAt, Boolean ipBased, String scope, String sourcePlugin, String externalId) {
            this(id, serverId, playerUuid, playerName, type, action, reason, staffUuid, staffName, issuedAt,
                    expiresAt, ipBased, scope, sourcePlugin, externalId, null, null);
        }

        @Override
        public RecordKind kind() {
            return RecordKind.PUNISHMENT;
        }

        @Override
        public JsonObject toJson() {
            JsonObject o = new JsonObject();
            put(o, "id", id);
            put(o, "server_id", serverId);
            put(o, "player_uuid", playerUuid);
            put(o, "player_name", playerName);
            put(o, "type", type);
            put(o, "action", action);
            put(o, "reason", reason);
            put(o, "staff_uuid", staffUuid);
            put(o, "staff_name", staffName);
            put(o, "issued_at", issuedAt);
            if (!"kick".equals(type)) {
                put(o, "expires_at", expiresAt);
            }
            if (ipBased != null) {
                o.addProperty("ip_based", ipBased);
            }
            put(o, "scope", scope);
            put(o, "source_plugin", sourcePlugin);
            put(o, "external_id", externalId);
            put(o, "punishment_id", punishmentId);
            put(o, "revoke_reason", revokeReason);
            return o;
        }
    }

    /**
     * An anti-cheat flag (from the Grim and Vulcan integrations): {@code pingMs} is the player's
     * round trip and {@code tps} the server's ticks per second when it was flagged, each null when
     * unknown.
     */
    public record AnticheatFlag(UUID id, UUID serverId, UUID playerUuid, String playerName,
            String checkName, String checkType, double violationLevel, String detail,
            String sourcePlugin, boolean experimental, Integer pingMs, Double tps, Instant flaggedAt)
            implements WardenRecord {
        public AnticheatFlag {
            playerName = Text.clip(playerName, 64);
            checkName = Text.clip(checkName, 128);
            checkType = Text.clip(checkType, 64);
            detail = Text.clip(detail, 4096);
            sourcePlugin = Text.clip(sourcePlugin, 64);
            violationLevel = clamp(violationLevel, 0, 1e12);
            if (pingMs != null) {
                pingMs = Math.max(0, Math.min(10_000_000, pingMs));
            }
            if (tps != null) {
                tps = clamp(tps, 0, 1000);
            }
        }

        @Override
        public RecordKind kind() {
            return RecordKind.ANTICHEAT_FLAG;
        }

        @Override
        public JsonObject toJson() {
            JsonObject o = new JsonObject();
            put(o, "id", id);
            put(o, "server_id", serverId);
            put(o, "player_uuid", playerUuid);
            put(o, "player_name", playerName);
            // The contract needs 1..=128 characters; an anti-cheat that names no check says so.
            put(o, "check_name", checkName == null ? "unknown" : checkName);
            put(o, "check_type", checkType);
            o.addProperty("violation_level", violationLevel);
            put(o, "detail", detail);
            put(o, "source_plugin", sourcePlugin);
            o.addProperty("is_experimental", experimental);
            if (pingMs != null) {
                o.addProperty("ping_ms", pingMs);
            }
            if (tps != null) {
                o.addProperty("tps", Math.round(tps * 100.0) / 100.0);
            }
            put(o, "flagged_at", flaggedAt);
            return o;
        }
    }

    /** A join or a quit; the address is hashed by ingest and never stored in clear. */
    public record Session(UUID id, UUID serverId, UUID playerUuid, String playerName, String event,
            Instant at, String clientVersion, String ip) implements WardenRecord {
        public Session {
            playerName = Text.clip(playerName, 64);
            clientVersion = Text.clip(clientVersion, 64);
        }

        @Override
        public RecordKind kind() {
            return RecordKind.SESSION;
        }

        @Override
        public JsonObject toJson() {
            JsonObject o = new JsonObject();
            put(o, "id", id);
            put(o, "server_id", serverId);
            put(o, "player_uuid", playerUuid);
            put(o, "player_name", playerName == null ? "unknown" : playerName);
            put(o, "event", event);
            put(o, "at", at);
            put(o, "client_version", clientVersion);
            put(o, "ip", ip);
            return o;
        }
    }

    /** A permission-group change; {@code action} is add, remove or set. */
    public record RankChange(UUID id, UUID playerUuid, String playerName, String action,
            String group, String previousGroup, UUID serverId, UUID staffUuid, String staffName,
            Instant expiresAt, Instant changedAt) implements WardenRecord {
        public RankChange {
            playerName = Text.clip(playerName, 64);
            group = Text.clip(group, 64);
            previousGroup = Text.clip(previousGroup, 64);
            staffName = Text.clip(staffName, 64);
        }

        @Override
        public RecordKind kind() {
            return RecordKind.RANK_CHANGE;
        }

        @Override
        public JsonObject toJson() {
            JsonObject o = new JsonObject();
            put(o, "id", id);
            put(o, "player_uuid", playerUuid);
            put(o, "player_name", playerName);
            put(o, "action", action);
            put(o, "group", group);
            put(o, "previous_group", previousGroup);
            put(o, "server_id", serverId);
            put(o, "staff_uuid", staffUuid);
            put(o, "staff_name", staffName);
            put(o, "expires_at", expiresAt);
            put(o, "changed_at", changedAt);
            return o;
        }
    }

    /** A link (or unlink) between a player and an account elsewhere, e.g. Discord. */
    public record AccountLink(UUID id, UUID playerUuid, String platform, String externalId,
            String externalName, String action, Instant at) implements WardenRecord {
        public AccountLink {
            platform = Text.clip(platform, 32);
            externalId = Text.clip(externalId, 128);
            externalName = Text.clip(externalName, 128);
        }

        @Override
        public RecordKind kind() {
            return RecordKind.ACCOUNT_LINK;
        }

        @Override
        public JsonObject toJson() {
            JsonObject o = new JsonObject();
            put(o, "id", id);
            put(o, "player_uuid", playerUuid);
            put(o, "platform", platform);
            put(o, "external_id", externalId);
            put(o, "external_name", externalName);
            put(o, "action", action);
            put(o, "at", at);
            return o;
        }
    }

    /** A custom event; {@code properties} was checked and copied at the call ({@link Properties}). */
    public record CustomEvent(UUID id, UUID playerUuid, String name, JsonObject properties,
            Instant occurredAt) implements WardenRecord {
        @Override
        public RecordKind kind() {
            return RecordKind.CUSTOM_EVENT;
        }

        @Override
        public JsonObject toJson() {
            JsonObject o = new JsonObject();
            put(o, "id", id);
            put(o, "player_uuid", playerUuid);
            put(o, "name", name);
            if (properties != null) {
                o.add("properties", properties);
            }
            put(o, "occurred_at", occurredAt);
            return o;
        }
    }

    private static double clamp(double v, double min, double max) {
        if (Double.isNaN(v)) {
            return min;
        }
        return Math.max(min, Math.min(max, v));
    }
}
