package dev.warden.plugin.core;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongSupplier;
import java.util.logging.Logger;

/**
 * The delivery loop, run by one thread (the core's own, never a server thread).
 *
 * <p>Every sync interval ({@link #cycle}): a heartbeat is made, the queue is drained, the records
 * are cut into batches (one per endpoint unless more than a batch is waiting) and each batch is
 * written to the spool. Then ({@link #send}) the spool is sent oldest first, at most
 * {@code maxRequestsPerCycle} requests per cycle: in the steady state that is one request per
 * endpoint that has something to send; after an outage the same budget drains the backlog.
 *
 * <p>Answers: 2xx deletes the batch (records the service refused inside a 202 are counted and
 * dropped); 400, 413, 415 and 422 drop the batch (it can never pass) and say so; 429 waits for
 * {@code Retry-After}; 401 and 403 keep everything and retry every minute (the key is wrong or
 * revoked); 404, 408, 5xx and network errors keep everything and back off with jitter.
 */
public final class Delivery {
    /** How long to wait after a 401/403 before trying the key again. */
    static final long KEY_REFUSED_WAIT_MILLIS = 60_000;

    private final EventQueue queue;
    private final Spool spool;
    private final Batcher batcher = new Batcher();
    private final LongSupplier clock;
    private final Logger logger;
    private final UUID serverId;
    private volatile ServerStats stats;
    private volatile WardenConfig config;
    private volatile Transport transport;
    private Backoff backoff;
    private volatile Runnable onCycle = () -> {};

    private long nextCycleAt;
    private long notBefore;
    private int budget;

    // Read by /warden status from other threads.
    private volatile String connection = "not connected yet";
    private volatile long sentRecords;
    private volatile long refusedRecords;
    private volatile Instant lastSync;
    private volatile String lastError;
    private volatile Instant lastErrorAt;
    private volatile long notBeforeVisible;
    private volatile long[] spoolCounts = {0, 0, 0, 0};

    public Delivery(EventQueue queue, Spool spool, UUID serverId, ServerStats stats, WardenConfig config,
            Transport transport, LongSupplier clock, Logger logger) {
        this.queue = queue;
        this.spool = spool;
        this.serverId = serverId;
        this.stats = stats;
        this.clock = clock;
        this.logger = logger;
        configure(config, transport);
    }

    /** New settings (on /warden reload); takes effect at the next tick. Delivery thread only. */
    public void configure(WardenConfig config, Transport transport) {
        this.config = config;
        this.transport = transport;
        this.backoff = new Backoff(1000, config.maxBackoffSeconds() * 1000L, () -> ThreadLocalRandom.current().nextDouble());
        this.nextCycleAt = 0;
        this.notBefore = 0;
    }

    /** Called often (every half second) by the delivery thread. */
    public void tick() {
        long now = clock.getAsLong();
        if (now >= nextCycleAt) {
            cycle(true);
            nextCycleAt = now + config.syncIntervalSeconds() * 1000L;
        }
        send(Long.MAX_VALUE);
        refreshCounts();
    }

    /** Publishes the spool's numbers for {@link #status()} (the spool itself is not thread-safe). */
    public void refreshCounts() {
        spoolCounts = new long[] {spool.batches(), spool.records(), spool.bytes(), spool.droppedRecords()};
    }

    /** Runs {@code r} at the start of every sync cycle, on the delivery thread (a rate cap's new window). */
    public void onCycle(Runnable r) {
        this.onCycle = r;
    }

    /** Heartbeat, drain, batch and spool. */
    public void cycle(boolean online) {
        onCycle.run();
        long now = clock.getAsLong();
        budget = config.maxRequestsPerCycle();
        ServerStats s = stats;
        if (s != null) {
            Runtime rt = Runtime.getRuntime();
            double mib = 1024.0 * 1024.0;
            String name = config.serverName() != null ? config.serverName() : s.defaultName();
            queue.offer(new Records.Heartbeat(UuidV7.at(now), serverId, s.tps(), s.playerCount(),
                    s.maxPlayers(), Instant.ofEpochMilli(now), name, s.version(),
                    (rt.totalMemory() - rt.freeMemory()) / mib, rt.maxMemory() / mib, online, s.role()));
        }
        while (true) {
            List<WardenRecord> records = queue.drain(10_000);
            if (records.isEmpty()) {
                break;
            }
            for (Batch batch : batcher.batch(records)) {
                spool.append(batch);
            }
        }
    }

    /**
     * Sends spooled batches, oldest first, within this cycle's budget, until one fails or
     * {@code deadlineMillis} (on the clock) passes.
     */
    public void send(long deadlineMillis) {
        while (budget > 0) {
            long now = clock.getAsLong();
            if (now < notBefore || now >= deadlineMillis) {
                return;
            }
            List<Spool.Entry> next = spool.oldest(1);
            if (next.isEmpty()) {
                return;
            }
            budget--;
            if (!sendOne(next.get(0), now, deadlineMillis)) {
                return;
            }
        }
    }

    /** Sends everything spooled until the spool is empty, a send fails, or the deadline passes. */
    public void flush(long deadlineMillis) {
        budget = Integer.MAX_VALUE;
        notBefore = 0;
        send(deadlineMillis);
        refreshCounts();
    }

    private boolean sendOne(Spool.Entry first, long now, long deadlineMillis) {
        long timeoutMillis = Math.min(config.requestTimeoutSeconds() * 1000L, Math.max(deadlineMillis - now, 1));
        Transport.Response response;
        Spool.Entry entry;
        List<Spool.Entry> group;
        try {
            Merged merged = merge(first);
            group = merged.entries();
            entry = new Spool.Entry(first.seq(), first.kind(), merged.count(), 0, null, null);
            response = transport.send(first.kind(), merged.body(), Duration.ofMillis(timeoutMillis));
        } catch (IOException e) {
            failure("network error: " + e.getClass().getSimpleName()
                    + (e.getMessage() == null ? "" : " (" + e.getMessage() + ")"), -1);
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
        int status = response.status();
        if (status >= 200 && status < 300) {
            group.forEach(spool::remove);
            countAccepted(entry, response.body());
            backoff.reset();
            connection = "connected";
            lastSync = Instant.ofEpochMilli(clock.getAsLong());
            return true;
        }
        if (status == 429) {
            long wait = Math.max(response.retryAfterSeconds(), 1) * 1000L;
            notBefore = clock.getAsLong() + wait + ThreadLocalRandom.current().nextLong(250);
            notBeforeVisible = notBefore;
            connection = "rate limited";
            error("429 rate_limited: waiting " + wait / 1000 + " s (Retry-After); the plugin key's quota is"
                    + " shared by every server using it");
            return false;
        }
        if (status == 401 || status == 403) {
            notBefore = clock.getAsLong() + KEY_REFUSED_WAIT_MILLIS;
            notBeforeVisible = notBefore;
            connection = "key refused";
            error(status + " " + problemCode(response.body()) + ": the service refused the plugin key;"
                    + " check plugin-key in config.yml, then /warden reload");
            return false;
        }
        if (status == 400 || status == 413 || status == 415 || status == 422
                || (status >= 400 && status < 500 && status != 404 && status != 408)) {
            group.forEach(spool::remove);
            refusedRecords += entry.count();
            connection = "connected";
            error(status + " " + problemCode(response.body()) + ": the service refused a batch of "
                    + entry.count() + " " + entry.kind().key() + " record(s); dropped");
            return true;
        }
        failure(status + " " + problemCode(response.body()), response.retryAfterSeconds());
        return false;
    }

    /** One request's body: spooled batches of one kind, merged. */
    private record Merged(List<Spool.Entry> entries, int count, byte[] body) {}

    /**
     * The oldest batch, joined by the next batches of the same kind while the request stays within
     * the contract's bounds (1,000 records, {@link Batcher#MAX_BODY_BYTES}): after an outage, the
     * many small batches of its cycles go out in few requests.
     */
    private Merged merge(Spool.Entry first) throws IOException {
        byte[] firstBody = spool.read(first);
        List<Spool.Entry> same = spool.oldestOfKind(first.kind(), Batcher.MAX_RECORDS);
        if (same.size() < 2 || first.count() >= Batcher.MAX_RECORDS) {
            return new Merged(List.of(first), first.count(), firstBody);
        }
        List<Spool.Entry> entries = new ArrayList<>();
        List<byte[]> arrays = new ArrayList<>();
        int count = 0;
        long bytes = 2;
        for (Spool.Entry e : same) {
            if (count + e.count() > Batcher.MAX_RECORDS) {
                break;
            }
            byte[] json = Gzip.decompress(e == first ? firstBody : spool.read(e));
            if (!entries.isEmpty() && bytes + json.length - 1 > Batcher.MAX_BODY_BYTES) {
                break;
            }
            entries.add(e);
            arrays.add(json);
            count += e.count();
            bytes += json.length - 1;
        }
        if (entries.size() == 1) {
            return new Merged(entries, count, firstBody);
        }
        return new Merged(entries, count, Gzip.joinArrays(arrays));
    }

    private void failure(String what, long retryAfterSeconds) {
        long delay = backoff.nextDelayMillis();
        if (retryAfterSeconds > 0) {
            delay = Math.max(delay, retryAfterSeconds * 1000L);
        }
        notBefore = clock.getAsLong() + delay;
        notBeforeVisible = notBefore;
        connection = "unreachable, retrying";
        error(what + ": retrying in " + Math.max(1, delay / 1000) + " s (attempt " + backoff.failures() + ")");
    }

    private void error(String message) {
        if (!message.equals(lastError)) {
            logger.warning(message);
        }
        lastError = message;
        lastErrorAt = Instant.ofEpochMilli(clock.getAsLong());
    }

    private void countAccepted(Spool.Entry entry, String body) {
        try {
            JsonElement parsed = JsonParser.parseString(body == null ? "" : body);
            if (parsed.isJsonObject()) {
                JsonObject o = parsed.getAsJsonObject();
                if (o.has("rejected") && o.get("rejected").isJsonArray()) {
                    int refused = o.getAsJsonArray("rejected").size();
                    if (refused > 0) {
                        refusedRecords += refused;
                        String code = o.getAsJsonArray("rejected").get(0).getAsJsonObject().get("code").getAsString();
                        error("the service refused " + refused + " of " + entry.count() + " "
                                + entry.kind().key() + " record(s) (" + code + "); dropped");
                    }
                    sentRecords += entry.count() - refused;
                    return;
                }
            }
        } catch (RuntimeException e) {
            // A single custom event answers {"id",...}; anything unexpected counts as sent.
        }
        sentRecords += entry.count();
    }

    private static String problemCode(String body) {
        try {
            JsonElement parsed = JsonParser.parseString(body == null ? "" : body);
            if (parsed.isJsonObject() && parsed.getAsJsonObject().has("code")) {
                return parsed.getAsJsonObject().get("code").getAsString();
            }
        } catch (RuntimeException e) {
            // Not problem details.
        }
        return "error";
    }

    public void setStats(ServerStats stats) {
        this.stats = stats;
    }

    public Status status() {
        long nb = notBeforeVisible;
        long[] c = spoolCounts;
        return new Status(serverId, connection, queue.size(), queue.capacity(), queue.dropped(),
                (int) c[0], c[1], c[2], spool.maxBytes(), c[3],
                sentRecords, refusedRecords, lastSync, lastError, lastErrorAt,
                nb > clock.getAsLong() ? Instant.ofEpochMilli(nb) : null);
    }
}
