package dev.warden.plugin.paper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.warden.plugin.core.Capture;
import dev.warden.plugin.core.EventQueue;
import dev.warden.plugin.core.WardenConfig;
import dev.warden.plugin.core.integration.FlagCap;
import dev.warden.plugin.core.integration.Integration;
import dev.warden.plugin.core.integration.Integrations;
import dev.warden.plugin.paper.grim.GrimIntegration;
import java.time.Clock;
import java.util.List;
import java.util.UUID;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/** The anti-cheat integrations start and fail on their own, as WardenPlugin enables them. */
class AnticheatIntegrationsTest {
    @Test
    void grimWhoseApiIsNotLoadedFailsAtStartAloneAndIsListed() {
        Capture capture = new Capture(new EventQueue(10), UUID.randomUUID(),
                WardenConfig.defaults("http://x", "wdn_plugin_x"), Clock.systemUTC());
        Integrations integrations = new Integrations(Logger.getLogger("test"));
        Integration luckPerms = integrations.enable("LuckPerms", "5.4", i -> {});
        // GrimAPIProvider is never initialised here: the API Grim publishes when it starts is absent.
        Integration grim = integrations.enable("Grim", "2.3.73",
                i -> GrimIntegration.enable(null, capture, new FlagCap(20), i));
        assertFalse(grim.active());
        assertTrue(luckPerms.active());
        List<String> lines = Integrations.statusLines(integrations.snapshot());
        assertEquals("    LuckPerms 5.4: on, 0 sent", lines.get(1));
        assertTrue(lines.get(2).startsWith("    Grim 2.3.73: failed (starting: java.lang.IllegalStateException: GrimAPI is not loaded"),
                lines.get(2));
    }
}
