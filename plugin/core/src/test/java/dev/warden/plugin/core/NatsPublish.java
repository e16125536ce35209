package dev.warden.plugin.core;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

/**
 * Appends a message to the event log the way query-api does (a JetStream publish with a
 * {@code Nats-Msg-Id}, waiting for the stream's ack), over the NATS text protocol: the test needs
 * no NATS client library. Test-only.
 */
final class NatsPublish implements AutoCloseable {
    private static final String INBOX = "_INBOX.warden_it";
    private final Socket socket;
    private final BufferedInputStream in;
    private final OutputStream out;

    NatsPublish(String natsUrl) throws IOException {
        String hostPort = natsUrl.replaceFirst("^nats://", "");
        int colon = hostPort.lastIndexOf(':');
        socket = new Socket(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
        socket.setSoTimeout(10_000);
        in = new BufferedInputStream(socket.getInputStream());
        out = socket.getOutputStream();
        line(); // INFO
        write("CONNECT {\"verbose\":false,\"pedantic\":false,\"headers\":true,\"protocol\":1}\r\nSUB " + INBOX + " 1\r\nPING\r\n");
        while (!line().equals("PONG")) {
            // +OK or INFO
        }
    }

    /** The account's partition (FNV-1a of the id's 16 bytes), as shared/src/subjects.rs computes it. */
    static int partition(UUID account, int partitions) {
        ByteBuffer b = ByteBuffer.allocate(16).putLong(account.getMostSignificantBits()).putLong(account.getLeastSignificantBits());
        long hash = 0xcbf29ce484222325L;
        for (byte x : b.array()) {
            hash ^= x & 0xff;
            hash *= 0x100000001b3L;
        }
        return (int) Long.remainderUnsigned(hash, partitions);
    }

    /** Publishes and waits for the stream's ack; returns its answer (JSON with {@code seq}). */
    String publish(String subject, String msgId, byte[] payload) throws IOException {
        byte[] headers = ("NATS/1.0\r\nNats-Msg-Id: " + msgId + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
        write("HPUB " + subject + " " + INBOX + " " + headers.length + " " + (headers.length + payload.length) + "\r\n");
        out.write(headers);
        out.write(payload);
        out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
        while (true) {
            String l = line();
            if (l.equals("PING")) {
                write("PONG\r\n");
            } else if (l.startsWith("MSG ")) {
                String[] parts = l.split(" ");
                byte[] body = in.readNBytes(Integer.parseInt(parts[parts.length - 1]));
                line();
                return new String(body, StandardCharsets.UTF_8);
            } else if (l.startsWith("-ERR")) {
                throw new IOException(l);
            }
        }
    }

    private void write(String s) throws IOException {
        out.write(s.getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    private String line() throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) != -1 && c != '\n') {
            if (c != '\r') {
                b.write(c);
            }
        }
        if (c == -1) {
            throw new IOException("nats-server closed the connection");
        }
        return b.toString(StandardCharsets.UTF_8);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
