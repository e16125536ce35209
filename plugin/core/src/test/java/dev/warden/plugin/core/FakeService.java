package dev.warden.plugin.core;

import com.google.gson.JsonArray;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedDeque;

/**
 * A real HTTP server (the JDK's) standing in for ingest in the unit tests: it records each request
 * and answers from a script, 202 by default. The contract test (ContractIT) uses the real stack.
 */
final class FakeService implements AutoCloseable {
    record Request(String path, Map<String, List<String>> headers, JsonArray body) {
        String header(String name) {
            for (var e : headers.entrySet()) {
                if (e.getKey().equalsIgnoreCase(name)) {
                    return e.getValue().get(0);
                }
            }
            return null;
        }
    }

    record Answer(int status, String retryAfter, String body) {}

    final List<Request> requests = new ArrayList<>();
    final ConcurrentLinkedDeque<Answer> script = new ConcurrentLinkedDeque<>();
    private final HttpServer server;

    FakeService() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> {
            byte[] raw = exchange.getRequestBody().readAllBytes();
            JsonArray body = TestSupport.gunzipArray(raw);
            synchronized (requests) {
                requests.add(new Request(exchange.getRequestURI().getPath(), Map.copyOf(exchange.getRequestHeaders()), body));
            }
            Answer a = script.poll();
            if (a == null) {
                a = new Answer(202, null, "{\"accepted\":" + body.size() + ",\"duplicates\":0,\"rejected\":[]}");
            }
            if (a.retryAfter() != null) {
                exchange.getResponseHeaders().add("Retry-After", a.retryAfter());
            }
            byte[] out = a.body().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(a.status(), out.length);
            try (OutputStream os = exchange.getResponseBody()) {
                os.write(out);
            }
        });
        server.start();
    }

    String baseUrl() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    List<Request> requests() {
        synchronized (requests) {
            return List.copyOf(requests);
        }
    }

    List<String> paths() {
        return requests().stream().map(Request::path).toList();
    }

    /** Every record id received, in order. */
    List<String> ids() {
        List<String> ids = new ArrayList<>();
        for (Request r : requests()) {
            r.body().forEach(e -> ids.add(e.getAsJsonObject().get("id").getAsString()));
        }
        return ids;
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
