package dev.warden.plugin.paper.punishments.advancedban;

import dev.warden.plugin.core.enforce.PunishmentBridge;
import dev.warden.plugin.paper.punishments.ConsoleCommands;
import dev.warden.plugin.paper.scheduler.PlatformScheduler;
import java.time.Instant;
import java.util.UUID;
import java.util.concurrent.Callable;
import me.leoko.advancedban.manager.PunishmentManager;
import me.leoko.advancedban.utils.Punishment;
import me.leoko.advancedban.utils.PunishmentType;

/**
 * Dashboard actions applied through AdvancedBan's public API, on the server's thread (where its
 * own commands run): a new {@code Punishment} stored with {@code create(true)} (silent: no staff
 * broadcast; it kicks or tells the player itself), which gives its id; a lift through
 * {@code PunishmentManager.get().getPunishment(id)} (or the player's active ban or mute) and
 * {@code delete}. AdvancedBan then fires its own events, which {@link AdvancedBanIntegration} hands
 * to the core (the echo). The operator is "Warden".
 */
public final class AdvancedBanBridge implements PunishmentBridge {
    /** AdvancedBan's reason column: VARCHAR(255). */
    static final int MAX_REASON = 255;
    static final String OPERATOR = "Warden";

    /** Runs a call into AdvancedBan on the server's thread and waits for it. */
    @FunctionalInterface
    public interface OnServerThread {
        <T> T call(Callable<T> task) throws Refused;
    }

    private final OnServerThread thread;
    private final Store store;

    AdvancedBanBridge(OnServerThread thread, Store store) {
        this.thread = thread;
        this.store = store;
    }

    /** The bridge, calling AdvancedBan on the server's thread through {@code scheduler}. */
    public static PunishmentBridge onServerThread(PlatformScheduler scheduler) {
        return new AdvancedBanBridge(new OnServerThread() {
            @Override
            public <T> T call(Callable<T> task) throws Refused {
                return ConsoleCommands.onServerThread(scheduler, task);
            }
        }, API);
    }

    @Override
    public String source() {
        return AdvancedBanIntegration.SOURCE;
    }

    @Override
    public String displayName() {
        return "AdvancedBan";
    }

    @Override
    public int maxReasonLength() {
        return MAX_REASON;
    }

    /** AdvancedBan's UUID string: without dashes. */
    static String uuid(UUID player) {
        return player.toString().replace("-", "");
    }

    /** The AdvancedBan type for a contract type, temporary when it ends. */
    static PunishmentType type(String type, boolean temporary) throws Refused {
        return switch (type) {
            case "ban" -> temporary ? PunishmentType.TEMP_BAN : PunishmentType.BAN;
            case "mute" -> temporary ? PunishmentType.TEMP_MUTE : PunishmentType.MUTE;
            case "warning" -> temporary ? PunishmentType.TEMP_WARNING : PunishmentType.WARNING;
            default -> throw new Refused("AdvancedBan cannot apply a " + type);
        };
    }

    /** The punishment to store: start now, end in epoch milliseconds or -1 (permanent). */
    static Punishment draft(String type, UUID player, String playerName, String reason, Instant expiresAt, Instant now)
            throws Refused {
        String text = ConsoleCommands.text(reason);
        text = text.length() > MAX_REASON ? text.substring(0, MAX_REASON).strip() : text;
        return new Punishment(playerName == null ? player.toString() : playerName, uuid(player),
                text.isEmpty() ? null : text, OPERATOR, type(type, expiresAt != null), now.toEpochMilli(),
                expiresAt == null ? -1 : expiresAt.toEpochMilli(), null, -1);
    }

    @Override
    public String issue(String type, UUID player, String playerName, String reason, Instant expiresAt) throws Refused {
        Punishment p = draft(type, player, playerName, reason, expiresAt, Instant.now());
        int id = thread.call(() -> store.create(p));
        // AdvancedBan logs and returns when it cannot store it (no id): its event never comes.
        if (id < 0) {
            throw new Refused("AdvancedBan did not store it (see the server log)");
        }
        return Integer.toString(id);
    }

    @Override
    public void lift(String type, UUID player, String playerName, String externalId, String reason) throws Refused {
        if (!type.equals("ban") && !type.equals("mute")) {
            throw new Refused("AdvancedBan cannot lift a " + type);
        }
        Integer id = null;
        try {
            id = externalId == null ? null : Integer.valueOf(externalId);
        } catch (NumberFormatException e) {
            throw new Refused("not an AdvancedBan id: " + externalId);
        }
        Integer byId = id;
        if (!thread.call(() -> store.delete(type, player == null ? null : uuid(player), byId))) {
            throw new Refused("AdvancedBan has no active " + type + " " + (externalId == null ? "of that player" : externalId));
        }
    }

    /** AdvancedBan's calls: store a punishment (its id, or -1), lift one (false: none active). */
    interface Store {
        int create(Punishment p);

        boolean delete(String type, String uuid, Integer id);
    }

    /** AdvancedBan's own API. */
    static final Store API = new Store() {
        @Override
        public int create(Punishment p) {
            p.create(true);
            return p.getId();
        }

        @Override
        public boolean delete(String type, String uuid, Integer id) {
            PunishmentManager manager = PunishmentManager.get();
            Punishment p = id == null ? null : manager.getPunishment(id);
            if (p == null && uuid != null) {
                p = type.equals("mute") ? manager.getMute(uuid) : manager.getBan(uuid);
            }
            if (p == null) {
                return false;
            }
            p.delete(OPERATOR, false, true);
            return true;
        }
    };
}
