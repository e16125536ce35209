package dev.warden.plugin.core.enforce;

import java.util.ArrayList;
import java.util.List;

/**
 * The {@code enforcement} settings of config.yml: whether the server reads the dashboard's actions,
 * its server group (actions scoped to another group are skipped; empty: only global ones apply)
 * and the long-poll's wait.
 */
public record EnforcementConfig(boolean enabled, String serverGroup, int waitSeconds) {
    public static final EnforcementConfig DEFAULTS = new EnforcementConfig(true, null, 25);

    public EnforcementConfig {
        serverGroup = serverGroup == null || serverGroup.isBlank() ? null : serverGroup.strip();
    }

    /** True when an action with this scope is for this server. */
    public boolean inScope(String scope) {
        return scope == null || scope.equalsIgnoreCase("global") || scope.equalsIgnoreCase(serverGroup);
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
