package dev.warden.plugin.paper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.warden.plugin.core.CommandRedactor;
import dev.warden.plugin.core.WardenConfig;
import dev.warden.plugin.core.integration.FlagCap;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.bukkit.configuration.ConfigurationSection;
import org.junit.jupiter.api.Test;

/** plugin.yml and config.yml as shipped in the jar. */
class PluginFilesTest {
    static String resource(String name) throws IOException {
        try (InputStream in = PluginFilesTest.class.getClassLoader().getResourceAsStream(name)) {
            assertNotNull(in, name);
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void pluginYmlNamesTheMainClassTheCommandAndThePermissions() throws Exception {
        String yml = resource("plugin.yml");
        Matcher main = Pattern.compile("(?m)^main: (\\S+)$").matcher(yml);
        assertTrue(main.find());
        assertEquals(WardenPlugin.class.getName(), main.group(1));
        assertTrue(yml.contains("version: 0.1.0"), "the version is filled in by the build");
        assertTrue(yml.contains("folia-supported: true"));
        Matcher soft = Pattern.compile("(?m)^softdepend: \\[(.*)]$").matcher(yml);
        assertTrue(soft.find(), "softdepend");
        List<String> softDepends = List.of(soft.group(1).split(",\\s*"));
        for (String plugin : List.of("LuckPerms", "LiteBans", "LibertyBans", "AdvancedBan", "GrimAC", "Vulcan")) {
            assertTrue(softDepends.contains(plugin), plugin + " loads before Warden when present: " + softDepends);
        }
        for (String needed : List.of("  warden:", "  warden.status:", "  warden.reload:", "  warden.command:")) {
            assertTrue(yml.contains("\n" + needed + "\n"), needed);
        }
    }

    /** Every key of config.yml has a comment right above it, and its defaults are the core's. */
    @Test
    void everyConfigKeyIsCommentedAndTheDefaultsMatch() throws Exception {
        String yml = resource("config.yml");
        List<String> lines = yml.lines().toList();
        Map<String, String> values = new HashMap<>();
        Map<String, List<String>> lists = new HashMap<>();
        String section = null;
        String listKey = null;
        Pattern key = Pattern.compile("^( *)([a-z0-9-]+):(?: (.*))?$");
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (line.strip().startsWith("- ") && listKey != null) {
                lists.get(listKey).add(line.strip().substring(2));
                continue;
            }
            Matcher m = key.matcher(line);
            if (!m.matches()) {
                continue;
            }
            String previous = lines.get(i - 1).strip();
            assertTrue(previous.startsWith("#"), "no comment above '" + line.strip() + "'");
            String full = m.group(1).isEmpty() ? m.group(2) : section + "." + m.group(2);
            if (m.group(1).isEmpty()) {
                section = m.group(2);
            }
            String v = m.group(3);
            if (v == null || v.isEmpty()) {
                listKey = full;
                lists.put(full, new ArrayList<>());
            } else {
                listKey = null;
                values.put(full, v.replace("\"", ""));
            }
        }
        ConfigurationSection parsed = new ConfigurationSection() {
            @Override
            public String getString(String path, String def) {
                return values.getOrDefault(path, def);
            }

            @Override
            public int getInt(String path, int def) {
                return values.containsKey(path) ? Integer.parseInt(values.get(path)) : def;
            }

            @Override
            public boolean getBoolean(String path, boolean def) {
                return values.containsKey(path) ? Boolean.parseBoolean(values.get(path)) : def;
            }

            @Override
            public List<String> getStringList(String path) {
                return lists.getOrDefault(path, List.of());
            }

            @Override
            public boolean contains(String path) {
                return values.containsKey(path) || lists.containsKey(path);
            }
        };
        WardenConfig read = ConfigReader.read(parsed);
        WardenConfig defaults = WardenConfig.defaults(read.baseUrl(), read.pluginKey());
        assertEquals(defaults.toString(), read.toString());
        assertEquals(defaults.syncIntervalSeconds(), read.syncIntervalSeconds());
        assertEquals(defaults.queueCapacity(), read.queueCapacity());
        assertEquals(defaults.spoolMaxMb(), read.spoolMaxMb());
        assertEquals(defaults.maxRequestsPerCycle(), read.maxRequestsPerCycle());
        assertEquals(defaults.shutdownFlushSeconds(), read.shutdownFlushSeconds());
        assertEquals(defaults.requestTimeoutSeconds(), read.requestTimeoutSeconds());
        assertEquals(defaults.maxBackoffSeconds(), read.maxBackoffSeconds());
        assertEquals(CommandRedactor.DEFAULT_REDACTED, new java.util.HashSet<>(read.redactCommands()));
        assertEquals(List.of(), read.ignoreCommands());
        assertEquals("PASTE_YOUR_PLUGIN_KEY_HERE", read.pluginKey());
        assertTrue(read.problems().stream().anyMatch(p -> p.startsWith("plugin-key is not set")), read.problems().toString());
        assertEquals(FlagCap.DEFAULT_LIMIT, ConfigReader.maxFlagsPerCheck(parsed));
        assertTrue(values.containsKey("anticheat.max-flags-per-check"));
        for (String k : List.of("capture.chat", "capture.commands", "capture.sessions", "capture.send-ip",
                "capture.punishments", "capture.rank-changes", "capture.chat-channel", "server-name", "proxy")) {
            assertTrue(values.containsKey(k), k);
        }
        assertEquals(false, ConfigReader.behindProxy(parsed), "not behind a proxy unless told");

        // Dashboard actions: Warden's own lists and no writer by default; the two other settings read.
        dev.warden.plugin.core.enforce.EnforcementConfig enforcement = ConfigReader.enforcement(parsed);
        assertEquals("warden", values.get("enforcement.apply-through"));
        assertEquals(false, enforcement.throughPlugin());
        assertEquals(false, enforcement.pluginWriter());
        values.put("enforcement.apply-through", "punishment-plugin");
        values.put("enforcement.punishment-plugin-writer", "true");
        assertTrue(ConfigReader.enforcement(parsed).throughPlugin() && ConfigReader.enforcement(parsed).pluginWriter());
        assertTrue(ConfigReader.problems(read, parsed).stream().noneMatch(p -> p.startsWith("enforcement.apply-through")));
        values.put("enforcement.apply-through", "litebans");
        assertTrue(ConfigReader.problems(read, parsed).stream().anyMatch(p -> p.startsWith(
                "enforcement.apply-through must be warden or punishment-plugin (is litebans)")));
    }
}
