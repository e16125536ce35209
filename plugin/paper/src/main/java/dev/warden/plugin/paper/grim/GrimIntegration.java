package dev.warden.plugin.paper.grim;

import ac.grim.grimac.api.AbstractCheck;
import ac.grim.grimac.api.GrimAPIProvider;
import ac.grim.grimac.api.GrimUser;
import ac.grim.grimac.api.event.EventBus;
import ac.grim.grimac.api.event.events.FlagEvent;
import dev.warden.plugin.core.Capture;
import dev.warden.plugin.core.integration.FlagCap;
import dev.warden.plugin.core.integration.Integration;
import java.util.UUID;
import java.util.function.Consumer;
import org.bukkit.plugin.Plugin;

/**
 * Grim's flags, through GrimAPI's event bus: every {@code FlagEvent} becomes the contract's
 * anti-cheat flag ({@code source_plugin} "grim"), within the per-check rate cap. Loaded only when
 * Grim is enabled; this package is the only one that names Grim's API, so the plugin runs without it.
 *
 * <p>It subscribes with the class-keyed {@code EventBus#subscribe(Object, Class, listener)}: GrimAPI
 * has it from 1.2 to 1.6 (deprecated since 1.3 in favour of typed channels, which 1.2 lacks), so
 * one build serves both. An API without it fails this integration alone, at start.
 */
public final class GrimIntegration {
    static final String SOURCE = "grim";

    private GrimIntegration() {}

    public static void enable(Plugin plugin, Capture capture, FlagCap cap, Integration integration) {
        register(GrimAPIProvider.get().getEventBus(), plugin, capture, cap, integration);
    }

    static void register(EventBus bus, Object plugin, Capture capture, FlagCap cap, Integration integration) {
        Consumer<FlagEvent> handler = integration.guard("a flag", e -> flag(capture, cap, integration, e));
        bus.subscribe(plugin, FlagEvent.class, handler::accept);
    }

    /**
     * One flag. Grim fires FlagEvent as an asynchronous event ({@code GrimCheckEvent} is built with
     * {@code async = true}): on the flagged player's netty thread, where its checks run, up to many
     * times a second per player. So: a cap lookup first, no lock, no I/O, no server call; the
     * verbose text (rendered lazily by recent Grim versions) is read only for a flag that is sent.
     */
    static void flag(Capture capture, FlagCap cap, Integration integration, FlagEvent event) {
        GrimUser user = event.getUser();
        AbstractCheck check = event.getCheck();
        UUID player = user.getUniqueId();
        String name = check.getCheckName();
        if (!cap.admit(player, name)) {
            integration.dropped(cap.reason());
            return;
        }
        int type = typeAt(name);
        capture.anticheatFlag(player, user.getName(), type < 0 ? name : name.substring(0, type),
                type < 0 ? null : name.substring(type), check.getViolations(), event.getVerbose(), SOURCE,
                check.isExperimental(), user.getTransactionPing());
        integration.sent();
    }

    /**
     * Where the check's type letter starts in a Grim check name, or -1: Grim names the variants of
     * a check with a capital letter at the end ("BadPacketsA", "CrashB"), its single checks without
     * ("Reach", "Simulation", "AimModulo360").
     */
    static int typeAt(String name) {
        int n = name == null ? 0 : name.length();
        if (n < 3) {
            return -1;
        }
        char last = name.charAt(n - 1);
        char before = name.charAt(n - 2);
        return last >= 'A' && last <= 'Z' && Character.isLowerCase(before) ? n - 1 : -1;
    }
}
