package dev.warden.plugin.core.enforce;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;

/**
 * Where a banned player appeals: the dashboard's public form ({@code <dashboard>/appeal/<token>}),
 * signed by the service and good until {@code expiresAt}. The feed hands one out with each ban, and
 * {@code POST /api/plugin/appeal-links} signs fresh ones as they near expiry.
 */
public record AppealLink(String url, Instant expiresAt) {
    /** Longest URL kept (a token is 71 characters; the rest is the dashboard's address). */
    static final int MAX_URL_LENGTH = 2048;

    /** Whether the link still works at {@code now}. */
    public boolean usableAt(Instant now) {
        return expiresAt.isAfter(now);
    }

    /**
     * Reads {@code {"url", "expires_at"}}; null when absent or not a usable link (an http or https URL
     * with no whitespace or control character, and a time): a bad link never stops a ban.
     */
    static AppealLink parse(JsonElement element) {
        if (element == null || !element.isJsonObject()) {
            return null;
        }
        try {
            JsonObject o = element.getAsJsonObject();
            return of(Action.string(o, "url"), Action.string(o, "expires_at"));
        } catch (IllegalStateException | UnsupportedOperationException | ClassCastException e) {
            return null;
        }
    }

    /** A link from its two stored strings; null when either is missing or unusable. */
    static AppealLink of(String url, String expiresAt) {
        if (url == null || expiresAt == null || url.length() > MAX_URL_LENGTH
                || !(url.startsWith("https://") || url.startsWith("http://"))
                || url.chars().anyMatch(c -> c <= ' ' || c == 0x7f)) {
            return null;
        }
        try {
            return new AppealLink(url, OffsetDateTime.parse(expiresAt).toInstant());
        } catch (DateTimeParseException e) {
            return null;
        }
    }
}
