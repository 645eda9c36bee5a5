package dev.syncular.server.bench;

import com.github.luben.zstd.ZstdInputStream;
import dev.syncular.server.cli.HttpFailure;
import dev.syncular.server.testsupport.SyncTestClient;
import java.io.BufferedInputStream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.zip.GZIPInputStream;

/**
 * The load generator's HTTP/1.1 transport: one keep-alive socket per thread and server, each request written
 * with one {@code write} (head and body together), the response read with {@code Content-Length} or chunked
 * framing. Same requests as {@link dev.syncular.server.testsupport.HttpTransport} ({@code POST <mount>/sync}
 * with the SSP2 content type, {@code GET <mount>/segments/{id}} with {@code X-Syncular-Scopes}, descriptor
 * URLs fetched with no credentials, §1.1, §5.4, §5.5), at a fraction of the client CPU of the JDK's
 * {@code HttpClient} — on a 2-core machine every millisecond the clients spend is taken from the server and
 * PostgreSQL. No TLS, no redirects, no request compression: a benchmark tool, not a general client.
 *
 * <p>{@code -Dbench.acceptEncoding=...} (e.g. {@code "gzip, deflate, br, zstd"}, what browsers and the Syncular
 * clients send) adds that {@code Accept-Encoding} to every {@code POST /sync} and decodes {@code gzip} and
 * {@code zstd} responses (§1.3); unset, no {@code Accept-Encoding} is sent.
 */
final class BenchHttpTransport implements SyncTestClient.Transport {
    private static final String CONTENT_TYPE = "application/vnd.syncular.sync.v2";
    private static final String ACCEPT_ENCODING = System.getProperty("bench.acceptEncoding", "");
    /** Per thread: one open connection per {@code host:port}. */
    private static final ThreadLocal<Map<String, Connection>> CONNECTIONS = ThreadLocal.withInitial(HashMap::new);

    private final String host;
    private final int port;
    private final String mount;
    private final String partition;

    /** @param baseUrl server URL including the mount, e.g. {@code http://127.0.0.1:8080} */
    BenchHttpTransport(String baseUrl, String partition) {
        URI uri = URI.create(baseUrl);
        this.host = uri.getHost();
        this.port = uri.getPort() < 0 ? 80 : uri.getPort();
        String path = uri.getRawPath() == null ? "" : uri.getRawPath();
        this.mount = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
        this.partition = partition;
    }

    @Override
    public byte[] roundTrip(SyncTestClient client, byte[] body) {
        return exchange(
                host,
                port,
                "POST",
                mount + "/sync",
                identity(client)
                        + "content-type: " + CONTENT_TYPE + "\r\n"
                        + (ACCEPT_ENCODING.isEmpty() ? "" : "accept-encoding: " + ACCEPT_ENCODING + "\r\n"),
                body);
    }

    @Override
    public byte[] downloadSegment(SyncTestClient client, String segmentId, String scopesHeader) {
        return exchange(
                host,
                port,
                "GET",
                mount + "/segments/" + segmentId,
                identity(client) + "X-Syncular-Scopes: " + scopesHeader + "\r\n",
                null);
    }

    @Override
    public byte[] fetchUrl(String url) {
        URI uri = URI.create(url);
        if (!"http".equals(uri.getScheme())) {
            return SyncTestClient.Transport.super.fetchUrl(url);
        }
        String target = uri.getRawPath() + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
        return exchange(uri.getHost(), uri.getPort() < 0 ? 80 : uri.getPort(), "GET", target, "", null);
    }

    private String identity(SyncTestClient client) {
        return "x-actor-id: " + client.actorId + "\r\n"
                + (partition == null ? "" : "x-syncular-partition: " + partition + "\r\n");
    }

    private static byte[] exchange(String host, int port, String method, String target, String headers, byte[] body) {
        String key = host + ":" + port;
        Map<String, Connection> open = CONNECTIONS.get();
        Connection c = open.get(key);
        boolean reused = c != null;
        try {
            if (c == null) {
                c = new Connection(host, port);
                open.put(key, c);
            }
            try {
                return c.exchange(method, target, host + ":" + port, headers, body);
            } catch (IOException e) {
                if (!reused) {
                    throw e;
                }
                // the server closed an idle keep-alive connection: one retry on a fresh one
                c.close();
                c = new Connection(host, port);
                open.put(key, c);
                return c.exchange(method, target, host + ":" + port, headers, body);
            }
        } catch (IOException e) {
            if (c != null) {
                c.close();
            }
            open.remove(key);
            throw new UncheckedIOException(e);
        }
    }

    private static final class Connection {
        private final Socket socket;
        private final OutputStream out;
        private final InputStream in;

        Connection(String host, int port) throws IOException {
            socket = new Socket();
            socket.setTcpNoDelay(true);
            socket.connect(new InetSocketAddress(host, port), 10_000);
            socket.setSoTimeout(60_000);
            out = socket.getOutputStream();
            in = new BufferedInputStream(socket.getInputStream(), 64 * 1024);
        }

        byte[] exchange(String method, String target, String hostHeader, String headers, byte[] body)
                throws IOException {
            byte[] head = (method + " " + target + " HTTP/1.1\r\nHost: " + hostHeader + "\r\n" + headers
                            + (body == null ? "" : "Content-Length: " + body.length + "\r\n") + "\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1);
            byte[] request = head;
            if (body != null) {
                request = new byte[head.length + body.length];
                System.arraycopy(head, 0, request, 0, head.length);
                System.arraycopy(body, 0, request, head.length, body.length);
            }
            out.write(request);
            out.flush();

            String status = line();
            if (status == null || !status.startsWith("HTTP/1.1 ") || status.length() < 12) {
                throw new IOException("bad status line: " + status);
            }
            int code = Integer.parseInt(status.substring(9, 12));
            long length = -1;
            boolean chunked = false;
            boolean close = false;
            String coding = "";
            for (String h = line(); h != null && !h.isEmpty(); h = line()) {
                int colon = h.indexOf(':');
                String name = h.substring(0, colon).trim().toLowerCase(Locale.ROOT);
                String value = h.substring(colon + 1).trim();
                switch (name) {
                    case "content-length" -> length = Long.parseLong(value);
                    case "transfer-encoding" ->
                        chunked = value.toLowerCase(Locale.ROOT).contains("chunked");
                    case "connection" -> close = value.equalsIgnoreCase("close");
                    case "content-encoding" -> coding = value.toLowerCase(Locale.ROOT);
                    default -> {}
                }
            }
            byte[] payload;
            if (chunked) {
                ByteArrayOutputStream acc = new ByteArrayOutputStream(8192);
                while (true) {
                    String sizeLine = line();
                    int semi = sizeLine.indexOf(';');
                    int size = Integer.parseInt((semi < 0 ? sizeLine : sizeLine.substring(0, semi)).trim(), 16);
                    if (size == 0) {
                        for (String t = line(); t != null && !t.isEmpty(); t = line()) {
                            // trailers: none expected
                        }
                        break;
                    }
                    acc.write(in.readNBytes(size));
                    line(); // CRLF after the chunk
                }
                payload = acc.toByteArray();
            } else if (length >= 0) {
                payload = in.readNBytes((int) length);
                if (payload.length != length) {
                    throw new IOException("connection closed mid-body");
                }
            } else {
                payload = in.readAllBytes();
                close = true;
            }
            if (close) {
                close();
            }
            payload = decode(coding, payload);
            if (code != 200) {
                throw new HttpFailure(code, new String(payload, StandardCharsets.UTF_8));
            }
            return payload;
        }

        private static byte[] decode(String coding, byte[] payload) throws IOException {
            return switch (coding) {
                case "", "identity" -> payload;
                case "gzip" -> new GZIPInputStream(new ByteArrayInputStream(payload)).readAllBytes();
                case "zstd" -> new ZstdInputStream(new ByteArrayInputStream(payload)).readAllBytes();
                default -> throw new IOException("unexpected Content-Encoding " + coding);
            };
        }

        /** One header or chunk-size line without its CRLF; null at end of stream. */
        private String line() throws IOException {
            StringBuilder sb = new StringBuilder(64);
            int b;
            while ((b = in.read()) >= 0) {
                if (b == '\n') {
                    int n = sb.length();
                    return n > 0 && sb.charAt(n - 1) == '\r' ? sb.substring(0, n - 1) : sb.toString();
                }
                sb.append((char) b);
            }
            if (sb.length() == 0) {
                throw new IOException("connection closed");
            }
            return sb.toString();
        }

        void close() {
            try {
                socket.close();
            } catch (IOException e) {
                // already gone
            }
        }
    }
}
