package dev.syncular.server.testsupport;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * HTTP/1.1 over a plain socket, for what HTTP client libraries will not do: send only a request's head and
 * read the answer to a body that never came, send part of a chunked body, keep pushing a body after the
 * answer to see where the server stops taking it. Every read has a deadline ({@link #WAIT}).
 */
public final class RawHttp implements AutoCloseable {
    public static final Duration WAIT = Duration.ofSeconds(60);
    private static final int FILL = 64 * 1024;

    /** One answer: status, headers (lower-case names) and the body as text. */
    public record Answer(int status, Map<String, String> headers, String body) {}

    private final Socket socket;
    private final OutputStream out;
    private final InputStream in;

    private RawHttp(Socket socket) throws IOException {
        this.socket = socket;
        this.out = socket.getOutputStream();
        this.in = socket.getInputStream();
    }

    public static RawHttp open(String host, int port) throws IOException {
        Socket s = new Socket();
        s.connect(new InetSocketAddress(host, port), (int) WAIT.toMillis());
        s.setSoTimeout((int) WAIT.toMillis());
        return new RawHttp(s);
    }

    /** Writes the request line and headers (a {@code Host} header is added). */
    public RawHttp head(String method, String path, Map<String, String> headers) throws IOException {
        StringBuilder b = new StringBuilder(method).append(' ').append(path).append(" HTTP/1.1\r\nHost: localhost\r\n");
        headers.forEach((k, v) -> b.append(k).append(": ").append(v).append("\r\n"));
        b.append("\r\n");
        out.write(b.toString().getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
        return this;
    }

    /**
     * Writes a WebSocket upgrade of {@code path} (RFC 6455 §4.1: {@code Upgrade}, {@code Connection}, version 13 and
     * a fixed key) with {@code headers} besides, for a test that reads how the upgrade is refused.
     */
    public RawHttp upgrade(String path, Map<String, String> headers) throws IOException {
        Map<String, String> all = new LinkedHashMap<>(headers);
        all.put("Upgrade", "websocket");
        all.put("Connection", "Upgrade");
        all.put("Sec-WebSocket-Version", "13");
        all.put("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==");
        return head("GET", path, all);
    }

    /** Writes raw body bytes. */
    public RawHttp write(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
        return this;
    }

    /** Writes one chunk of a {@code Transfer-Encoding: chunked} body; an empty one ends the body. */
    public RawHttp chunk(byte[] bytes) throws IOException {
        out.write((Integer.toHexString(bytes.length) + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
        out.write(bytes);
        out.write("\r\n".getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
        return this;
    }

    /**
     * Pushes up to {@code bytes} of filler (zeros; as chunks when {@code chunked}) and returns how many were
     * written before the server closed the connection — {@code bytes} when it took them all. Socket buffers
     * hold a few MiB, so the count exceeds what the server read by at most that much.
     */
    public long pump(long bytes, boolean chunked) {
        byte[] fill = new byte[FILL];
        long written = 0;
        try {
            while (written < bytes) {
                int n = (int) Math.min(FILL, bytes - written);
                if (chunked) {
                    chunk(n == FILL ? fill : Arrays.copyOf(fill, n));
                } else {
                    out.write(fill, 0, n);
                }
                written += n;
            }
            out.flush();
        } catch (IOException closedByServer) {
            return written;
        }
        return written;
    }

    /** Reads one answer: status line, headers, and a body framed by {@code Content-Length}, chunks or the close. */
    public Answer read() throws IOException {
        String status = line();
        if (status == null) {
            throw new IOException("connection closed before an answer");
        }
        Map<String, String> headers = new LinkedHashMap<>();
        for (String h = line(); h != null && !h.isEmpty(); h = line()) {
            int colon = h.indexOf(':');
            headers.put(
                    h.substring(0, colon).trim().toLowerCase(Locale.ROOT),
                    h.substring(colon + 1).trim());
        }
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        int code = Integer.parseInt(status.split(" ")[1]);
        if (headers.containsKey("content-length")) {
            body.write(in.readNBytes(Integer.parseInt(headers.get("content-length"))));
        } else if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
            for (int size = Integer.parseInt(line().trim(), 16); size > 0; size = Integer.parseInt(line().trim(), 16)) {
                body.write(in.readNBytes(size));
                line();
            }
            line();
        } else if (code != 204 && code != 304) {
            body.write(in.readAllBytes());
        }
        return new Answer(code, headers, body.toString(StandardCharsets.UTF_8));
    }

    /** Whether the server closed the connection: a read answers end-of-stream or a reset. */
    public boolean closedByServer() {
        try {
            return in.read() == -1;
        } catch (IOException reset) {
            return true;
        }
    }

    private String line() throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) != -1) {
            if (c == '\n') {
                String s = b.toString(StandardCharsets.ISO_8859_1);
                return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
            }
            b.write(c);
        }
        return b.size() == 0 ? null : b.toString(StandardCharsets.ISO_8859_1);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
