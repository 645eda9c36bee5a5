package dev.syncular.server.realtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The realtime socket declines RFC 7692 {@code permessage-deflate}, which browsers and Bun's and Node's WebSocket
 * clients offer on every upgrade. Negotiated, it would deflate every message of the socket on the event loop (the
 * hello, every delta, every §8.7 round chunk, however small: the extension has no size threshold) and hold a zlib
 * context of about 300 KB of native memory per socket, outside every byte budget (§1.3: transport compression is
 * the hop's choice; SSP2 frames carry none of their own). A raw upgrade that offers it gets a 101 without
 * {@code Sec-WebSocket-Extensions}, and the hello arrives as an uncompressed text frame (RSV1 clear).
 */
@QuarkusTest
class SocketCompressionTest {
    @TestHTTPResource("/")
    URI base;

    @Test
    void anOfferedPermessageDeflateIsDeclinedAndFramesGoUncompressed() throws IOException {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(base.getHost(), base.getPort()), 10_000);
            s.setSoTimeout(30_000);
            OutputStream out = s.getOutputStream();
            String clientId = "deflate-" + UUID.randomUUID();
            out.write(("GET /realtime?clientId=" + clientId + " HTTP/1.1\r\n"
                            + "Host: " + base.getHost() + ":" + base.getPort() + "\r\n"
                            + "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
                            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                            + "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n"
                            + "Accept-Encoding: gzip, deflate, br, zstd\r\n"
                            + "x-actor-id: alice\r\nx-syncular-partition: deflate-" + UUID.randomUUID() + "\r\n\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            DataInputStream in = new DataInputStream(s.getInputStream());
            String status = line(in);
            assertTrue(status.startsWith("HTTP/1.1 101"), status);
            Map<String, String> headers = new LinkedHashMap<>();
            for (String h = line(in); !h.isEmpty(); h = line(in)) {
                int colon = h.indexOf(':');
                headers.put(
                        h.substring(0, colon).trim().toLowerCase(Locale.ROOT),
                        h.substring(colon + 1).trim());
            }
            assertFalse(headers.containsKey("sec-websocket-extensions"), "no extension accepted: " + headers);

            int b0 = in.readUnsignedByte();
            int b1 = in.readUnsignedByte();
            assertEquals(0, b0 & 0x40, "RSV1 clear: the message is not deflated");
            assertEquals(0x1, b0 & 0x0f, "the first message is the text hello (§8.1)");
            long length = b1 & 0x7f;
            if (length == 126) {
                length = in.readUnsignedShort();
            } else if (length == 127) {
                length = in.readLong();
            }
            byte[] payload = in.readNBytes((int) length);
            String hello = new String(payload, StandardCharsets.UTF_8);
            assertTrue(hello.contains("\"hello\""), hello);
        }
    }

    private static String line(InputStream in) throws IOException {
        StringBuilder sb = new StringBuilder();
        for (int b = in.read(); b >= 0; b = in.read()) {
            if (b == '\n') {
                int n = sb.length();
                return n > 0 && sb.charAt(n - 1) == '\r' ? sb.substring(0, n - 1) : sb.toString();
            }
            sb.append((char) b);
        }
        throw new IOException("connection closed mid-line after '" + sb + "'");
    }
}
