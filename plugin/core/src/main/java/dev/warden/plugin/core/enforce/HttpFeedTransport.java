package dev.warden.plugin.core.enforce;

import dev.warden.plugin.core.HttpTransport;
import dev.warden.plugin.core.Transport;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** The feed over the JDK's HTTP client, with the plugin key in the Authorization header only. */
public final class HttpFeedTransport implements FeedTransport {
    private final HttpClient client;
    private final String baseUrl;
    private final String authorization;
    private final String userAgent;

    public HttpFeedTransport(String baseUrl, String pluginKey, String userAgent) {
        this.baseUrl = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
        this.authorization = "Bearer " + pluginKey;
        this.userAgent = userAgent;
        this.client = HttpClient.newBuilder()
                .connectTimeout(Duration.ofSeconds(5))
                .followRedirects(HttpClient.Redirect.NEVER)
                .build();
    }

    @Override
    public Transport.Response poll(String after, int waitSeconds, Duration timeout) throws IOException, InterruptedException {
        String query = "?wait=" + waitSeconds
                + (after == null ? "" : "&after=" + URLEncoder.encode(after, StandardCharsets.UTF_8));
        return send(HttpRequest.newBuilder(URI.create(baseUrl + "/api/plugin/actions" + query)).GET(), timeout);
    }

    @Override
    public Transport.Response ack(String json, Duration timeout) throws IOException, InterruptedException {
        return send(HttpRequest.newBuilder(URI.create(baseUrl + "/api/plugin/actions/acks"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8)), timeout);
    }

    @Override
    public Transport.Response appealLinks(String json, Duration timeout) throws IOException, InterruptedException {
        return send(HttpRequest.newBuilder(URI.create(baseUrl + "/api/plugin/appeal-links"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8)), timeout);
    }

    private Transport.Response send(HttpRequest.Builder builder, Duration timeout) throws IOException, InterruptedException {
        HttpRequest request = builder.timeout(timeout)
                .header("Authorization", authorization)
                .header("User-Agent", userAgent)
                .header("Accept", "application/json")
                .build();
        HttpResponse<String> response = client.send(request, HttpResponse.BodyHandlers.ofString());
        long retryAfter = response.headers().firstValue("Retry-After").map(HttpTransport::retryAfterSeconds).orElse(-1L);
        return new Transport.Response(response.statusCode(), retryAfter, response.body());
    }
}
