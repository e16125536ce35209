package dev.warden.plugin.core;

import java.io.IOException;
import java.time.Duration;

/** Sends one gzip-compressed batch to its endpoint. */
public interface Transport {
    /** The answer: status, {@code Retry-After} in seconds (-1 when absent) and the body. */
    record Response(int status, long retryAfterSeconds, String body) {}

    Response send(RecordKind kind, byte[] gzipBody, Duration timeout) throws IOException, InterruptedException;
}
