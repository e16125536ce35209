package dev.warden.plugin.core.enforce;

import dev.warden.plugin.core.Transport;
import java.io.IOException;
import java.time.Duration;

/** The feed's two requests: read the actions after a cursor, and acknowledge outcomes. */
public interface FeedTransport {
    /** {@code GET /api/plugin/actions?after=<cursor>&wait=<seconds>} ({@code after} omitted when null). */
    Transport.Response poll(String after, int waitSeconds, Duration timeout) throws IOException, InterruptedException;

    /** {@code POST /api/plugin/actions/acks} with a JSON body. */
    Transport.Response ack(String json, Duration timeout) throws IOException, InterruptedException;
}
