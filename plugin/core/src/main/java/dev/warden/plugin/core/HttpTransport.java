package dev.warden.plugin.core;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;

/**
 * The JDK's HTTP client: {@code Authorization: Bearer <plugin key>}, JSON, {@code
 * Content-Encoding: gzip}. The key is only ever put in that header; it is never logged and never
 * part of an exception message.
 */
public final class HttpTransport implements Transport {
    private final HttpClient client;
    private final String baseUrl;
    private final String authorization;
    private final String userAgent;

    public HttpTransport(String baseUrl, String pluginKey, String userAgent) {
        this.baseUrl = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
        this.authorization = "Bearer " + pluginKey;
        this.userAgent = userAgent;
        this.client = HttpClient.newBuilder()
                .connectTimeout(Duration.ofSeconds(5))
                .followRedirects(HttpClient.Redirect.NEVER)
                .build();
    }

    @Override
    public Response send(RecordKind kind, byte[] gzipBody, Duration timeout) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create(baseUrl + kind.path()))
                .timeout(timeout)
                .header("Authorization", authorization)
                .header("Content-Type", "application/json")
                .header("Content-Encoding", "gzip")
                .header("User-Agent", userAgent)
                .POST(HttpRequest.BodyPublishers.ofByteArray(gzipBody))
                .build();
        HttpResponse<String> response = client.send(request, HttpResponse.BodyHandlers.ofString());
        long retryAfter = response.headers().firstValue("Retry-After").map(HttpTransport::retryAfterSeconds).orElse(-1L);
        return new Response(response.statusCode(), retryAfter, response.body());
    }

    /** {@code Retry-After} as seconds: delta-seconds or an HTTP date; -1 when unreadable. */
    public static long retryAfterSeconds(String value) {
        String v = value.strip();
        try {
            return Math.max(0, Long.parseLong(v));
        } catch (NumberFormatException e) {
            try {
                ZonedDateTime at = ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME);
                long seconds = Duration.between(ZonedDateTime.now(at.getZone()), at).toSeconds();
                return Math.max(0, seconds + 1);
            } catch (DateTimeParseException ex) {
                return -1;
            }
        }
    }
}
