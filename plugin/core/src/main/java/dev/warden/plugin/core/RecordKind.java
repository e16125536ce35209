package dev.warden.plugin.core;

/** The kinds of record the plugin sends, each to its own endpoint (contract §5). */
public enum RecordKind {
    HEARTBEAT("heartbeat", "/api/plugin/heartbeat"),
    CHAT("chat", "/api/plugin/chat"),
    PUNISHMENT("punishment", "/api/plugin/punishments"),
    ANTICHEAT_FLAG("anticheat_flag", "/api/plugin/anticheat-flags"),
    SESSION("session", "/api/plugin/sessions"),
    RANK_CHANGE("rank_change", "/api/plugin/rank-changes"),
    ACCOUNT_LINK("account_link", "/api/plugin/account-links"),
    CUSTOM_EVENT("custom_event", "/api/v1/plugin/events");

    private final String key;
    private final String path;

    RecordKind(String key, String path) {
        this.key = key;
        this.path = path;
    }

    /** A short stable name, used in spool file names. */
    public String key() {
        return key;
    }

    /** The endpoint's path under the base URL. */
    public String path() {
        return path;
    }

    public static RecordKind fromKey(String key) {
        for (RecordKind kind : values()) {
            if (kind.key.equals(key)) {
                return kind;
            }
        }
        throw new IllegalArgumentException("unknown record kind: " + key);
    }
}
