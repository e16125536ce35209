package dev.warden.plugin.core;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.List;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;

/** gzip for spooled batches. */
final class Gzip {
    private Gzip() {}

    static byte[] decompress(byte[] gz) throws IOException {
        try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(gz))) {
            return in.readAllBytes();
        }
    }

    /** Joins JSON arrays ("[a,b]", "[c]") into one ("[a,b,c]"), compressed. */
    static byte[] joinArrays(List<byte[]> arrays) throws IOException {
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(buffer, 8192)) {
            gz.write('[');
            boolean firstItem = true;
            for (byte[] a : arrays) {
                int start = indexOf(a, (byte) '[') + 1;
                int end = lastIndexOf(a, (byte) ']');
                if (end <= start || isBlank(a, start, end)) {
                    continue;
                }
                if (!firstItem) {
                    gz.write(',');
                }
                gz.write(a, start, end - start);
                firstItem = false;
            }
            gz.write(']');
        }
        return buffer.toByteArray();
    }

    private static int indexOf(byte[] a, byte b) {
        for (int i = 0; i < a.length; i++) {
            if (a[i] == b) {
                return i;
            }
        }
        throw new IllegalArgumentException("not a JSON array");
    }

    private static int lastIndexOf(byte[] a, byte b) {
        for (int i = a.length - 1; i >= 0; i--) {
            if (a[i] == b) {
                return i;
            }
        }
        throw new IllegalArgumentException("not a JSON array");
    }

    private static boolean isBlank(byte[] a, int from, int to) {
        for (int i = from; i < to; i++) {
            if (a[i] != ' ' && a[i] != '\n' && a[i] != '\r' && a[i] != '\t') {
                return false;
            }
        }
        return true;
    }
}
