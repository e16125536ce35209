package dev.warden.plugin.core.integration;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Logger;

/**
 * The integrations this server runs, in the order they were enabled. The platform module enables
 * one only when its plugin is present; each starts, fails and is counted on its own.
 */
public final class Integrations {
    /** Starts an integration: registers its listeners with the other plugin's API. */
    @FunctionalInterface
    public interface Starter {
        void start(Integration integration) throws Exception;
    }

    private final Logger logger;
    private final List<Integration> enabled = new ArrayList<>();

    public Integrations(Logger logger) {
        this.logger = logger;
    }

    /**
     * Enables {@code name} (at the other plugin's {@code version}, as it reports it): runs
     * {@code starter}; a failure there (an exception, a class or method the installed version
     * lacks) is logged once and leaves the integration listed as failed. Returns the integration.
     */
    public Integration enable(String name, String version, Starter starter) {
        Integration integration = new Integration(name, version, logger);
        synchronized (enabled) {
            enabled.add(integration);
        }
        try {
            starter.start(integration);
            logger.info(name + (version == null ? "" : " " + version) + " found: integration on.");
        } catch (Exception | LinkageError e) {
            integration.fail("starting", e);
        }
        return integration;
    }

    /**
     * Stops every integration's handlers: called when Warden is disabled, so a listener another
     * plugin keeps (its event bus has no unsubscribe) sends nothing to a core that is gone.
     */
    public void stopAll() {
        synchronized (enabled) {
            enabled.forEach(Integration::stop);
        }
    }

    public List<Integration.Snapshot> snapshot() {
        synchronized (enabled) {
            List<Integration.Snapshot> out = new ArrayList<>(enabled.size());
            enabled.forEach(i -> out.add(i.snapshot()));
            return out;
        }
    }

    /** The status lines: one per integration, or one saying there is none. */
    public static List<String> statusLines(List<Integration.Snapshot> integrations) {
        if (integrations.isEmpty()) {
            return List.of("  integrations: none (no supported plugin found)");
        }
        List<String> lines = new ArrayList<>();
        lines.add("  integrations:");
        for (Integration.Snapshot s : integrations) {
            StringBuilder line = new StringBuilder("    ").append(s.name());
            if (s.version() != null) {
                line.append(' ').append(s.version());
            }
            switch (s.state()) {
                case FAILED -> line.append(": failed (").append(s.problem()).append(')');
                case STOPPED -> line.append(": stopped");
                case ON -> line.append(": on");
            }
            line.append(", ").append(s.sent()).append(" sent");
            if (s.dropped() > 0) {
                line.append(", ").append(s.dropped()).append(" dropped (").append(s.droppedBecause()).append(')');
            }
            lines.add(line.toString());
        }
        return lines;
    }
}
