package dev.warden.plugin.core.integration;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * One optional integration with another plugin (a punishment plugin, an anti-cheat, LuckPerms):
 * its state, what it sent and what it dropped, for {@code /warden status}. The first failure
 * (an API that changed under it, an exception in a handler) is logged once with its cause and
 * disables this integration alone; the plugin and the other integrations go on.
 */
public final class Integration {
    /** Where an integration stands. */
    public enum State {
        /** Listening and sending. */
        ON,
        /** Disabled by a failure; {@link Snapshot#problem()} says which. */
        FAILED,
        /**
         * Warden itself was disabled. Some plugins' event buses cannot unsubscribe a listener, so
         * the handlers stay registered and do nothing.
         */
        STOPPED
    }

    /** What {@code /warden status} shows of one integration. */
    public record Snapshot(String name, String version, State state, String problem, long sent, long dropped,
            String droppedBecause) {}

    private final String name;
    private final String version;
    private final Logger logger;
    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();
    private volatile State state = State.ON;
    private volatile String problem;
    private volatile String droppedBecause;

    Integration(String name, String version, Logger logger) {
        this.name = name;
        this.version = version;
        this.logger = logger;
    }

    public String name() {
        return name;
    }

    /** True until the first failure. */
    public boolean active() {
        return state == State.ON;
    }

    /**
     * Disables this integration: logs {@code what} and the cause once, with the stack; later calls
     * do nothing. Safe from any thread.
     */
    public void fail(String what, Throwable cause) {
        synchronized (this) {
            if (state != State.ON) {
                return;
            }
            problem = what + ": " + cause;
            state = State.FAILED;
        }
        logger.log(Level.WARNING, name + " integration disabled (" + what + "); Warden and the other integrations go on",
                cause);
    }

    /**
     * Wraps an event handler: while the integration is on, runs it; the first exception or
     * linkage error (a method the installed version does not have) disables the integration.
     */
    public <E> Consumer<E> guard(String what, Consumer<E> handler) {
        return event -> {
            if (state != State.ON) {
                return;
            }
            try {
                handler.accept(event);
            } catch (RuntimeException | LinkageError e) {
                fail(what, e);
            }
        };
    }

    /** Stops the handlers for good (Warden is being disabled); nothing is logged. */
    void stop() {
        synchronized (this) {
            state = State.STOPPED;
        }
    }

    /** Counts a record queued for the service. */
    public void sent() {
        sent.incrementAndGet();
    }

    /** Counts a record not sent on purpose (a rate cap), with the reason shown in the status. */
    public void dropped(String because) {
        dropped.incrementAndGet();
        droppedBecause = because;
    }

    public Snapshot snapshot() {
        return new Snapshot(name, version, state, problem, sent.get(), dropped.get(), droppedBecause);
    }
}
