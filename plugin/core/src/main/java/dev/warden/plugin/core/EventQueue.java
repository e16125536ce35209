package dev.warden.plugin.core;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The bounded in-memory queue between the server's threads and the delivery thread. Lock-free:
 * an offer never blocks and never waits on the delivery thread. When full, the new record is
 * dropped and counted (the spool, not this queue, rides out outages).
 */
public final class EventQueue {
    private final ConcurrentLinkedQueue<WardenRecord> items = new ConcurrentLinkedQueue<>();
    private final AtomicInteger size = new AtomicInteger();
    private final AtomicLong dropped = new AtomicLong();
    private final int capacity;

    public EventQueue(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("queue capacity must be at least 1");
        }
        this.capacity = capacity;
    }

    /** Queues {@code record}; false (and counted as dropped) when the queue is full. */
    public boolean offer(WardenRecord record) {
        if (size.incrementAndGet() > capacity) {
            size.decrementAndGet();
            dropped.incrementAndGet();
            return false;
        }
        items.add(record);
        return true;
    }

    /** Takes up to {@code max} records, oldest first. */
    public List<WardenRecord> drain(int max) {
        List<WardenRecord> out = new ArrayList<>(Math.min(max, Math.max(size.get(), 0)));
        while (out.size() < max) {
            WardenRecord r = items.poll();
            if (r == null) {
                break;
            }
            size.decrementAndGet();
            out.add(r);
        }
        return out;
    }

    public int size() {
        return Math.max(0, size.get());
    }

    public int capacity() {
        return capacity;
    }

    public long dropped() {
        return dropped.get();
    }
}
