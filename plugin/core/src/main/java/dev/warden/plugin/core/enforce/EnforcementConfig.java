package dev.warden.plugin.core.enforce;

import java.util.ArrayList;
import java.util.List;

/**
 * The {@code enforcement} settings of config.yml: whether the server reads the dashboard's actions,
 * its server group (actions scoped to another group are skipped; empty: only global ones apply),
 * the long-poll's wait, whether bans, mutes and warnings are applied through an installed
 * punishment plugin ({@code apply-through: punishment-plugin}) rather than Warden's own lists, and
 * whether this server is the one that writes into that plugin ({@code punishment-plugin-writer}).
 */
public record EnforcementConfig(boolean enabled, String serverGroup, int waitSeconds, boolean throughPlugin,
        boolean pluginWriter) {
    public static final EnforcementConfig DEFAULTS = new EnforcementConfig(true, null, 25);
    public static final String WARDEN = "warden";
    public static final String PUNISHMENT_PLUGIN = "punishment-plugin";

    public EnforcementConfig {
        serverGroup = serverGroup == null || serverGroup.isBlank() ? null : serverGroup.strip();
    }

    /** Warden's own lists, not a writer. */
    public EnforcementConfig(boolean enabled, String serverGroup, int waitSeconds) {
        this(enabled, serverGroup, waitSeconds, false, false);
    }

    /** True when an action with this scope is for this server. */
    public boolean inScope(String scope) {
        return scope == null || scope.equalsIgnoreCase("global") || scope.equalsIgnoreCase(serverGroup);
    }

    /** {@code apply-through} as written: true for punishment-plugin, false for warden, null for anything else. */
    public static Boolean throughPlugin(String applyThrough) {
        String s = applyThrough == null ? WARDEN : applyThrough.strip().toLowerCase(java.util.Locale.ROOT);
        return switch (s) {
            case WARDEN -> Boolean.FALSE;
            case PUNISHMENT_PLUGIN -> Boolean.TRUE;
            default -> null;
        };
    }

    public List<String> problems() {
        List<String> out = new ArrayList<>();
        if (waitSeconds < 0 || waitSeconds > 30) {
            out.add("enforcement.wait-seconds must be in 0..30 (is " + waitSeconds + ")");
        }
        if (serverGroup != null && serverGroup.length() > 64) {
            out.add("server-group must be at most 64 characters");
        }
        return out;
    }
}
