package dev.warden.plugin.bungee;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.warden.plugin.core.proxy.ProxyConfig;
import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/** bungee.yml and the proxy's config.yml as shipped in the BungeeCord jar. */
class BungeeFilesTest {
    static Map<String, Object> yaml(String resource) throws IOException {
        try (InputStream in = BungeeFilesTest.class.getResourceAsStream("/" + resource)) {
            return new Yaml().load(in);
        }
    }

    @Test
    void bungeeYmlNamesTheMainClass() throws IOException {
        Map<String, Object> yml = yaml("bungee.yml");
        assertEquals("Warden", yml.get("name"));
        assertEquals(WardenBungee.class.getName(), yml.get("main"));
        assertFalse(yml.get("version").toString().contains("${"), "the version is filled in");
    }

    @Test
    void theProxysConfigIsShippedWithChatOff() throws IOException {
        ProxyConfig c = ProxyConfig.read(yaml("config.yml"));
        assertEquals(List.of("plugin-key is not set (a plugin key, wdn_plugin_...)"), c.problems());
        assertFalse(c.core().captureChat());
    }
}
