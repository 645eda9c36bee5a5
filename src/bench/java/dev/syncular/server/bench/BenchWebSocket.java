package dev.syncular.server.bench;

import dev.syncular.server.wire.MessageDecoder;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;

/**
 * The load generator's realtime socket (§8.1) over a plain TCP socket, as a browser opens it: the upgrade may
 * offer RFC 7692 {@code permessage-deflate} ({@code offerDeflate}, what browsers, Bun and Node send), and
 * compressed messages are inflated, so a server that accepts the offer pays for it as it would with those
 * clients (the JDK's WebSocket client never offers it). It carries §8.7 rounds ({@link #round}: {@code 0x01}
 * chunks out, the {@code 0x01} response reassembled; deltas and control messages in between are read and
 * dropped). One thread per socket, blocking reads: a benchmark tool, not a general client.
 */
final class BenchWebSocket implements AutoCloseable {
    private static final int CHUNK = 64 * 1024;
    private static final byte[] DEFLATE_TAIL = {0x00, 0x00, (byte) 0xff, (byte) 0xff};

    private final Socket socket;
    private final OutputStream out;
    private final DataInputStream in;
    /** Whether the server accepted permessage-deflate. */
    final boolean deflate;

    private final Inflater inflater = new Inflater(true);
    /** The hello's text (§8.1), read by the constructor. */
    final String hello;

    /** Opens {@code <baseUrl>realtime?clientId=…} as {@code actor} in {@code partition} and reads the hello. */
    BenchWebSocket(String baseUrl, String partition, String actor, String clientId, boolean offerDeflate)
            throws IOException {
        URI uri = URI.create(baseUrl);
        String path = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
        if (!path.endsWith("/")) {
            path += "/";
        }
        socket = new Socket();
        socket.setTcpNoDelay(true);
        socket.connect(new InetSocketAddress(uri.getHost(), uri.getPort()), 10_000);
        socket.setSoTimeout(60_000);
        out = socket.getOutputStream();
        in = new DataInputStream(new BufferedInputStream(socket.getInputStream(), 64 * 1024));
        byte[] key = new byte[16];
        ThreadLocalRandom.current().nextBytes(key);
        out.write(("GET " + path + "realtime?clientId=" + clientId + " HTTP/1.1\r\n"
                        + "Host: " + uri.getHost() + ":" + uri.getPort() + "\r\n"
                        + "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
                        + "Sec-WebSocket-Key: " + Base64.getEncoder().encodeToString(key) + "\r\n"
                        + (offerDeflate
                                ? "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n"
                                : "")
                        + "x-actor-id: " + actor + "\r\nx-syncular-partition: " + partition + "\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
        String status = line();
        if (!status.startsWith("HTTP/1.1 101")) {
            socket.close();
            throw new IOException("upgrade refused: " + status);
        }
        boolean accepted = false;
        for (String h = line(); !h.isEmpty(); h = line()) {
            String lower = h.toLowerCase(Locale.ROOT);
            if (lower.startsWith("sec-websocket-extensions:") && lower.contains("permessage-deflate")) {
                accepted = true;
            }
        }
        deflate = accepted;
        Message first = next();
        if (first.opcode != 0x1) {
            throw new IOException("the first message is not the text hello");
        }
        hello = new String(first.payload, StandardCharsets.UTF_8);
    }

    /** One whole message: opcode of its first frame and its (inflated) payload. */
    private record Message(int opcode, byte[] payload) {}

    private Message next() throws IOException {
        ByteArrayOutputStream acc = new ByteArrayOutputStream();
        int opcode = -1;
        boolean compressed = false;
        while (true) {
            int b0 = in.readUnsignedByte();
            int b1 = in.readUnsignedByte();
            long len = b1 & 0x7f;
            if (len == 126) {
                len = in.readUnsignedShort();
            } else if (len == 127) {
                len = in.readLong();
            }
            byte[] payload = in.readNBytes((int) len);
            int op = b0 & 0x0f;
            if (op >= 0x8) { // control frames may come between fragments
                if (op == 0x9) {
                    send(0xA, payload);
                } else if (op == 0x8) {
                    throw new IOException("closed by the server");
                }
                continue;
            }
            if (opcode < 0) {
                opcode = op;
                compressed = (b0 & 0x40) != 0;
            }
            acc.write(payload);
            if ((b0 & 0x80) != 0) {
                break;
            }
        }
        byte[] bytes = acc.toByteArray();
        return new Message(opcode, compressed ? inflate(bytes) : bytes);
    }

    private byte[] inflate(byte[] bytes) throws IOException {
        inflater.setInput(concat(bytes, DEFLATE_TAIL));
        ByteArrayOutputStream o = new ByteArrayOutputStream(bytes.length * 4 + 64);
        byte[] buf = new byte[16 * 1024];
        try {
            while (true) {
                int n = inflater.inflate(buf);
                if (n == 0 && (inflater.needsInput() || inflater.finished())) {
                    break;
                }
                o.write(buf, 0, n);
            }
        } catch (DataFormatException e) {
            throw new IOException("bad deflate data", e);
        }
        return o.toByteArray();
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] c = new byte[a.length + b.length];
        System.arraycopy(a, 0, c, 0, a.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }

    /** One masked frame with FIN (clients mask, RFC 6455 §5.3; never compressed: RSV1 clear). */
    private void send(int opcode, byte[] payload) throws IOException {
        ByteArrayOutputStream f = new ByteArrayOutputStream(payload.length + 14);
        f.write(0x80 | opcode);
        if (payload.length < 126) {
            f.write(0x80 | payload.length);
        } else if (payload.length <= 0xffff) {
            f.write(0x80 | 126);
            f.write(payload.length >>> 8);
            f.write(payload.length);
        } else {
            f.write(0x80 | 127);
            for (int i = 7; i >= 0; i--) {
                f.write((int) ((long) payload.length >>> (8 * i)));
            }
        }
        byte[] mask = new byte[4];
        ThreadLocalRandom.current().nextBytes(mask);
        f.write(mask);
        for (int i = 0; i < payload.length; i++) {
            f.write(payload[i] ^ mask[i & 3]);
        }
        out.write(f.toByteArray());
        out.flush();
    }

    /** §8.7: the request as {@code 0x01} chunks, the {@code 0x01} response reassembled. */
    byte[] round(byte[] body) {
        try {
            for (int off = 0; off < body.length || off == 0; off += CHUNK) {
                int n = Math.min(CHUNK, body.length - off);
                byte[] chunk = new byte[n + 1];
                chunk[0] = 0x01;
                System.arraycopy(body, off, chunk, 1, n);
                send(0x2, chunk);
                if (body.length == 0) {
                    break;
                }
            }
            ByteArrayOutputStream response = new ByteArrayOutputStream();
            MessageDecoder d = MessageDecoder.forResponses();
            while (!d.isComplete()) {
                Message m = next();
                if (m.opcode == 0x2 && m.payload.length > 0 && m.payload[0] == 0x01) {
                    response.write(m.payload, 1, m.payload.length - 1);
                    d.feed(m.payload, 1, m.payload.length - 1);
                }
            }
            return response.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        try {
            send(0x8, new byte[] {0x03, (byte) 0xe8}); // 1000
        } catch (IOException ignored) {
            // closing anyway
        }
        try {
            socket.close();
        } catch (IOException ignored) {
            // closed
        }
        inflater.end();
    }

    private String line() throws IOException {
        StringBuilder sb = new StringBuilder(64);
        for (int b = in.read(); b >= 0; b = in.read()) {
            if (b == '\n') {
                int n = sb.length();
                return n > 0 && sb.charAt(n - 1) == '\r' ? sb.substring(0, n - 1) : sb.toString();
            }
            sb.append((char) b);
        }
        throw new IOException("connection closed during the upgrade");
    }
}
