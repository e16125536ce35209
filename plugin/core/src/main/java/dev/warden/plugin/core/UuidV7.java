package dev.warden.plugin.core;

import java.time.Instant;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/** UUID version 7 (RFC 9562): 48 bits of Unix milliseconds, then 74 random bits. */
public final class UuidV7 {
    private UuidV7() {}

    public static UUID at(Instant when) {
        return at(when.toEpochMilli());
    }

    public static UUID at(long epochMillis) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        long msb = (epochMillis & 0xFFFF_FFFF_FFFFL) << 16;
        msb |= 0x7000L; // version 7
        msb |= random.nextLong() & 0x0FFFL; // rand_a
        long lsb = random.nextLong() & 0x3FFF_FFFF_FFFF_FFFFL;
        lsb |= 0x8000_0000_0000_0000L; // variant 10
        return new UUID(msb, lsb);
    }

    /** The milliseconds a v7 UUID was made at. */
    public static long epochMillis(UUID id) {
        return id.getMostSignificantBits() >>> 16;
    }
}
