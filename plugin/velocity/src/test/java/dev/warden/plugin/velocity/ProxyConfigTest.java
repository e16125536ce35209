package dev.warden.plugin.velocity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.warden.plugin.core.CommandRedactor;
import dev.warden.plugin.core.proxy.ProxyConfig;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/** The proxy's config.yml and velocity-plugin.json as shipped. */
class ProxyConfigTest {
    static Map<String, Object> shipped() throws IOException {
        try (InputStream in = ProxyConfigTest.class.getResourceAsStream("/config.yml")) {
            return new Yaml().load(in);
        }
    }

    @Test
    void theShippedConfigIsTheDefaultsWithChatOffAndAskForAKey() throws IOException {
        ProxyConfig c = ProxyConfig.read(shipped());
        assertEquals(List.of("plugin-key is not set (a plugin key, wdn_plugin_...)"), c.problems());
        assertFalse(c.core().captureChat(), "the backends send chat");
        assertTrue(c.core().captureCommands());
        assertTrue(c.core().captureSessions());
        assertEquals(10, c.backendWaitSeconds());
        assertEquals(CommandRedactor.DEFAULT_REDACTED.stream().sorted().toList(),
                c.core().redactCommands().stream().sorted().toList());
        assertEquals(ProxyConfig.read(Map.of("base-url", "http://127.0.0.1:8080", "plugin-key",
                "PASTE_YOUR_PLUGIN_KEY_HERE", "redact-commands", shipped().get("redact-commands"))).core(), c.core(),
                "every other key's default is the file's");
    }

    @Test
    void wrongTypesAndRangesAreProblemsNotExceptions() {
        ProxyConfig c = ProxyConfig.read(Map.of("base-url", "http://127.0.0.1:8080", "plugin-key", "wdn_plugin_x", "backend-wait-seconds", 0,
                "sync-interval-seconds", "often", "capture", Map.of("chat", "yes")));
        assertEquals(List.of("sync-interval-seconds must be a whole number (is often)",
                "capture.chat must be true or false (is yes)",
                "backend-wait-seconds must be in 1..300 (is 0)"), c.problems());
    }

    @Test
    void velocityPluginJsonNamesTheMainClass() throws IOException {
        try (InputStream in = ProxyConfigTest.class.getResourceAsStream("/velocity-plugin.json")) {
            JsonObject o = JsonParser.parseReader(new InputStreamReader(in, StandardCharsets.UTF_8)).getAsJsonObject();
            assertEquals("warden", o.get("id").getAsString());
            assertEquals(WardenVelocity.class.getName(), o.get("main").getAsString());
            assertFalse(o.get("version").getAsString().contains("${"), "the version is filled in");
        }
    }
}
