package dev.warden.plugin.core.enforce;

import dev.warden.plugin.core.Transport;
import java.io.IOException;
import java.time.Duration;

/** The feed's requests: read the actions after a cursor, acknowledge outcomes, refresh appeal links. */
public interface FeedTransport {
    /** {@code GET /api/plugin/actions?after=<cursor>&wait=<seconds>} ({@code after} omitted when null). */
    Transport.Response poll(String after, int waitSeconds, Duration timeout) throws IOException, InterruptedException;

    /** {@code POST /api/plugin/actions/acks} with a JSON body. */
    Transport.Response ack(String json, Duration timeout) throws IOException, InterruptedException;

    /** {@code POST /api/plugin/appeal-links} with a JSON body. */
    Transport.Response appealLinks(String json, Duration timeout) throws IOException, InterruptedException;
}
