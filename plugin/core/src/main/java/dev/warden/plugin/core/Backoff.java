package dev.warden.plugin.core;

import java.util.function.DoubleSupplier;

/**
 * Exponential backoff with jitter for 5xx and network errors: the n-th consecutive failure waits
 * between half and all of min(cap, base x 2^(n-1)), so that a fleet of servers that lost the
 * service together does not come back in step.
 */
public final class Backoff {
    private final long baseMillis;
    private final long capMillis;
    private final DoubleSupplier random;
    private int failures;

    public Backoff(long baseMillis, long capMillis, DoubleSupplier random) {
        this.baseMillis = baseMillis;
        this.capMillis = Math.max(baseMillis, capMillis);
        this.random = random;
    }

    /** Records a failure and returns how long to wait before the next attempt. */
    public long nextDelayMillis() {
        failures++;
        long ceiling = baseMillis;
        for (int i = 1; i < failures && ceiling < capMillis; i++) {
            ceiling *= 2;
        }
        ceiling = Math.min(ceiling, capMillis);
        long half = ceiling / 2;
        return half + (long) (random.getAsDouble() * (ceiling - half));
    }

    public void reset() {
        failures = 0;
    }

    public int failures() {
        return failures;
    }
}
