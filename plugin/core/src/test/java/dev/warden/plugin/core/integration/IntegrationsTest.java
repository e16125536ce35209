package dev.warden.plugin.core.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

class IntegrationsTest {
    final List<LogRecord> warnings = new ArrayList<>();
    final Logger logger = Logger.getAnonymousLogger();

    IntegrationsTest() {
        logger.setUseParentHandlers(false);
        logger.addHandler(new Handler() {
            @Override
            public void publish(LogRecord r) {
                if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
                    warnings.add(r);
                }
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        });
    }

    @Test
    void aFailingStartDisablesThatIntegrationAloneAndIsListed() {
        Integrations integrations = new Integrations(logger);
        Integration good = integrations.enable("Grim", "2.3", i -> {});
        Integration bad = integrations.enable("Vulcan", "2.9", i -> {
            throw new NoSuchMethodError("me.frep.vulcan.api.VulcanAPI.getFlags()");
        });
        assertTrue(good.active());
        assertFalse(bad.active());
        assertEquals(1, warnings.size());
        List<String> lines = Integrations.statusLines(integrations.snapshot());
        assertEquals("    Grim 2.3: on, 0 sent", lines.get(1));
        assertTrue(lines.get(2).startsWith("    Vulcan 2.9: failed (starting: java.lang.NoSuchMethodError"), lines.get(2));
    }

    @Test
    void aHandlerThatThrowsIsLoggedOnceAndLaterEventsAreIgnored() {
        Integration integration = new Integrations(logger).enable("LiteBans", null, i -> {});
        List<String> handled = new ArrayList<>();
        Consumer<String> handler = integration.guard("a ban", e -> {
            handled.add(e);
            if (e.equals("bad")) {
                throw new IllegalStateException("the entry has no type");
            }
            integration.sent();
        });
        handler.accept("one");
        handler.accept("bad");
        handler.accept("two");
        handler.accept("bad");
        assertEquals(List.of("one", "bad"), handled);
        assertEquals(1, warnings.size());
        Integration.Snapshot s = integration.snapshot();
        assertEquals(Integration.State.FAILED, s.state());
        assertEquals(1, s.sent());
        assertTrue(s.problem().contains("a ban: java.lang.IllegalStateException: the entry has no type"), s.problem());
    }

    @Test
    void droppedRecordsAreCountedWithTheirReason() {
        Integration integration = new Integrations(logger).enable("Grim", "2.3", i -> {});
        integration.sent();
        integration.dropped("over 20 flags per check per player per cycle");
        integration.dropped("over 20 flags per check per player per cycle");
        assertEquals(List.of("  integrations:", "    Grim 2.3: on, 1 sent, 2 dropped (over 20 flags per check per player per cycle)"),
                Integrations.statusLines(List.of(integration.snapshot())));
        assertEquals(List.of("  integrations: none (no supported plugin found)"), Integrations.statusLines(List.of()));
    }

    @Test
    void stoppedIntegrationsIgnoreLaterEventsWithoutAWarning() {
        Integrations integrations = new Integrations(logger);
        Integration integration = integrations.enable("LiteBans", "2.16", i -> {});
        List<String> handled = new ArrayList<>();
        Consumer<String> handler = integration.guard("a ban", handled::add);
        handler.accept("before");
        integrations.stopAll();
        handler.accept("after");
        integration.fail("a ban", new IllegalStateException("late"));
        assertEquals(List.of("before"), handled);
        assertEquals(Integration.State.STOPPED, integration.snapshot().state());
        assertEquals(0, warnings.size());
        assertEquals("    LiteBans 2.16: stopped, 0 sent", Integrations.statusLines(integrations.snapshot()).get(1));
    }
}
