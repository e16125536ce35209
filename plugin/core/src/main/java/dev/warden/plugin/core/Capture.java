package dev.warden.plugin.core;

import dev.warden.plugin.api.WardenApi;
import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;

/**
 * What the platform's listeners call: each method stamps the record's id (a UUID v7) and time now,
 * builds the record and queues it. Nothing here blocks, touches the network or the disk, or takes
 * a lock shared with the delivery thread; safe from any thread.
 */
public final class Capture implements WardenApi {
    private final EventQueue queue;
    private final UUID serverId;
    private final Clock clock;
    private volatile WardenConfig config;
    private volatile CommandRedactor redactor;
    private final ServerStats stats;
    /** The echoes and links of dashboard punishments applied through a punishment plugin (null: none). */
    private volatile dev.warden.plugin.core.enforce.BridgeLinks links;

    public Capture(EventQueue queue, UUID serverId, WardenConfig config, Clock clock) {
        this(queue, serverId, config, clock, null);
    }

    /** {@code stats} gives anti-cheat flags the server's TPS (null: flags carry none). */
    public Capture(EventQueue queue, UUID serverId, WardenConfig config, Clock clock, ServerStats stats) {
        this.queue = queue;
        this.serverId = serverId;
        this.clock = clock;
        this.stats = stats;
        configure(config);
    }

    /** Where the echoes of punishments applied through a punishment plugin are recognised. */
    public void bridgeLinks(dev.warden.plugin.core.enforce.BridgeLinks links) {
        this.links = links;
    }

    public void configure(WardenConfig config) {
        this.redactor = new CommandRedactor(config.redactCommands(), config.ignoreCommands());
        this.config = config;
    }

    public UUID serverId() {
        return serverId;
    }

    public WardenConfig config() {
        return config;
    }

    /** The time now, on this capture's clock. */
    public Instant now() {
        return clock.instant();
    }

    /** A join; {@code ip} may be null, {@code clientVersion} may be null. */
    public void join(UUID player, String name, String ip, String clientVersion) {
        join(serverId, player, name, ip, clientVersion, now());
    }

    /**
     * A join on another server than this one, at a given time: a proxy sends its players' joins
     * with the id of the backend they joined, when it learns that id.
     */
    public void join(UUID server, UUID player, String name, String ip, String clientVersion, Instant at) {
        WardenConfig c = config;
        if (!c.captureSessions()) {
            return;
        }
        queue.offer(new Records.Session(UuidV7.at(at), server, player, name, "join", at, clientVersion,
                c.sendIp() ? ip : null));
    }

    public void quit(UUID player, String name) {
        quit(serverId, player, name);
    }

    /** A quit from another server than this one (a proxy's backend). */
    public void quit(UUID server, UUID player, String name) {
        if (!config.captureSessions()) {
            return;
        }
        Instant at = now();
        queue.offer(new Records.Session(UuidV7.at(at), server, player, name, "quit", at, null, null));
    }

    public void chat(UUID player, String name, String message) {
        chat(serverId, player, name, message);
    }

    /** A chat line seen on another server than this one (a proxy's backend). */
    public void chat(UUID server, UUID player, String name, String message) {
        WardenConfig c = config;
        if (!c.captureChat() || message == null || message.isEmpty()) {
            return;
        }
        Instant at = now();
        queue.offer(new Records.Chat(UuidV7.at(at), server, player, name, "chat", message, c.chatChannel(), at));
    }

    /** A command line as typed ("/msg bob hi"); redacted or left out as configured. */
    public void command(UUID player, String name, String commandLine) {
        command(serverId, player, name, commandLine);
    }

    /** A command typed while on another server than this one (a proxy's own commands). */
    public void command(UUID server, UUID player, String name, String commandLine) {
        if (!config.captureCommands()) {
            return;
        }
        String sent = redactor.apply(commandLine);
        if (sent == null) {
            return;
        }
        Instant at = now();
        queue.offer(new Records.Chat(UuidV7.at(at), server, player, name, "command", sent, null, at));
    }

    /**
     * A punishment seen on this server: {@code type} is ban, mute, kick or warning; {@code
     * expiresAt} null for a permanent one; {@code staffUuid} null for the console.
     */
    public void punishment(UUID player, String name, String type, String reason, UUID staffUuid,
            String staffName, Instant expiresAt, boolean ipBased, String sourcePlugin) {
        punishmentIssued(player, name, type, reason, staffUuid, staffName, null, expiresAt, ipBased, null,
                sourcePlugin, null);
    }

    /**
     * A punishment a punishment plugin issued: {@code type} is ban, mute, kick or warning; {@code
     * issuedAt} when the plugin says it began (null: now); {@code expiresAt} null for a permanent
     * one; {@code staffUuid} null for the console; {@code scope} the plugin's server scope, or
     * "global"; {@code externalId} the plugin's own id, which its revoke names. Returns whether
     * the record was queued (false while punishments are not captured, or the queue is full, or
     * when it is the plugin's echo of a dashboard punishment applied through it: that one is in
     * the log already, and the plugin's id is linked to it instead).
     */
    public boolean punishmentIssued(UUID player, String name, String type, String reason, UUID staffUuid,
            String staffName, Instant issuedAt, Instant expiresAt, boolean ipBased, String scope,
            String sourcePlugin, String externalId) {
        dev.warden.plugin.core.enforce.BridgeLinks l = links;
        if (l != null && sourcePlugin != null && l.issueSeen(sourcePlugin, player, type, externalId)) {
            return false;
        }
        if (!config.capturePunishments()) {
            return false;
        }
        Instant at = now();
        return queue.offer(new Records.Punishment(UuidV7.at(at), serverId, player, name, type, "issue", reason,
                staffUuid, staffName, issuedAt == null ? at : issuedAt, expiresAt, ipBased, scope, sourcePlugin,
                externalId));
    }

    /**
     * The revoke of a punishment a punishment plugin issued, named by that plugin's id ({@code
     * sourcePlugin}, {@code type} and {@code externalId} as the issue sent them), now: who revoked
     * it ({@code staffUuid} null for the console or when the plugin does not say) and why ({@code
     * revokeReason}, null when not given). Returns whether the record was queued. The revoke of a
     * plugin id linked to a dashboard punishment is sent by that punishment's id; the plugin's echo
     * of a revoke the dashboard made through it is not sent.
     */
    public boolean punishmentRevoked(UUID player, String name, String type, UUID staffUuid, String staffName,
            String revokeReason, String sourcePlugin, String externalId) {
        dev.warden.plugin.core.enforce.BridgeLinks l = links;
        UUID punishmentId = null;
        if (l != null && sourcePlugin != null) {
            dev.warden.plugin.core.enforce.BridgeLinks.Revoke seen = l.revokeSeen(sourcePlugin, player, type, externalId);
            if (seen.echo()) {
                return false;
            }
            punishmentId = seen.punishmentId();
        }
        if (!config.capturePunishments()) {
            return false;
        }
        Instant at = now();
        if (punishmentId != null) {
            return queue.offer(new Records.Punishment(UuidV7.at(at), serverId, player, name, type, "revoke", null,
                    staffUuid, staffName, at, null, null, null, null, null, punishmentId, revokeReason));
        }
        return queue.offer(new Records.Punishment(UuidV7.at(at), serverId, player, name, type, "revoke", null,
                staffUuid, staffName, at, null, null, null, sourcePlugin, externalId, null, revokeReason));
    }

    /** A permission-group change: {@code action} is add, remove or set; network-wide. */
    public void rankChange(UUID player, String name, String action, String group, String previousGroup,
            Instant expiresAt) {
        if (!config.captureRankChanges()) {
            return;
        }
        Instant at = now();
        queue.offer(new Records.RankChange(UuidV7.at(at), player, name, action, group, previousGroup, null,
                null, null, expiresAt, at));
    }

    /**
     * An anti-cheat flag, stamped with the server's TPS as last sampled (a field read: no server
     * call). {@code pingMs} null when the anti-cheat gives none; {@code detail} may be null. Cheap
     * enough for the anti-cheat's own threads: a few small objects, no lock, no I/O. Returns false
     * when the queue was full (the record is dropped and counted there).
     */
    public boolean anticheatFlag(UUID player, String name, String checkName, String checkType,
            double violationLevel, String detail, String sourcePlugin, boolean experimental, Integer pingMs) {
        Instant at = now();
        ServerStats s = stats;
        return queue.offer(new Records.AnticheatFlag(UuidV7.at(at), serverId, player, name, checkName, checkType,
                violationLevel, detail, sourcePlugin, experimental, pingMs, s == null ? null : s.tps(), at));
    }

    /** Queues a record an integration built itself (an anti-cheat flag, an account link). */
    public boolean record(WardenRecord record) {
        return queue.offer(record);
    }

    @Override
    public boolean track(UUID playerUuid, String name, Map<String, ?> properties) {
        if (playerUuid == null) {
            throw new IllegalArgumentException("required: playerUuid is null");
        }
        EventNames.check(name);
        var json = Properties.toJson(properties);
        Instant at = now();
        return queue.offer(new Records.CustomEvent(UuidV7.at(at), playerUuid, name, json, at));
    }
}
