package dev.syncular.server.realtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.LogCapture;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.SyncTestClient;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import org.jboss.logging.Logger;
import org.junit.jupiter.api.Test;

/**
 * Drain with many sockets, through the running app (docs/REALTIME.md "Drain and Kubernetes"): 2,000 open
 * sockets, and 20 whose clients stopped reading after a flood of 100 KB deltas (their close frame queues behind
 * what their buffers cannot take), are all sent 1001 at once, and the drain returns within its grace period;
 * every reading client sees its 1001, and the stuck clients' resets afterwards are ordinary disconnects (DEBUG,
 * counted as {@code connection}), not ERROR lines. The app is left draining,
 * so this class has a profile of its own.
 */
@QuarkusTest
@OwnApp
@TestProfile(DrainTest.Profile.class)
class DrainTest {
    private static final Logger LOG = Logger.getLogger(DrainTest.class);
    static final int SOCKETS = 2_000;
    static final int STUCK = 20;
    /** Commits of a 100 KB row each, fanned out as deltas to every deaf client: far more than its buffers hold. */
    static final int FLOOD_COMMITS = 12;

    static final Duration GRACE = Duration.ofSeconds(5);

    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "syncular.storage.pg-schema",
                    "sync_drain_"
                            + UUID.randomUUID().toString().replace("-", "").substring(0, 8),
                    // no heartbeats during the test: the sockets that read nothing would be reaped
                    "syncular.realtime.heartbeat-interval",
                    "10m",
                    "syncular.realtime.max-delta-bytes",
                    "256K");
        }
    }

    @TestHTTPResource("/")
    URI base;

    @Inject
    PodRealtime realtime;

    @Inject
    SchemaWindow window;

    /**
     * A client that stops reading after the upgrade's 101, over a raw socket with a small receive buffer: once the
     * server has sent it more than the buffers hold, every further write to it — its 1001 close included — waits
     * for room that never comes.
     */
    static final class Deaf implements AutoCloseable {
        final Socket socket = new Socket();

        Deaf(URI base, Map<String, String> headers, String clientId) throws IOException {
            socket.setReceiveBufferSize(4096);
            socket.connect(new InetSocketAddress(base.getHost(), base.getPort()), 10_000);
            socket.setSoTimeout(30_000);
            byte[] key = new byte[16];
            new SecureRandom().nextBytes(key);
            StringBuilder req = new StringBuilder("GET /realtime?clientId=" + clientId + " HTTP/1.1\r\n")
                    .append("Host: ")
                    .append(base.getHost())
                    .append(':')
                    .append(base.getPort())
                    .append("\r\n")
                    .append("Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n")
                    .append("Sec-WebSocket-Key: ")
                    .append(Base64.getEncoder().encodeToString(key))
                    .append("\r\n");
            headers.forEach((k, v) -> req.append(k).append(": ").append(v).append("\r\n"));
            socket.getOutputStream().write(req.append("\r\n").toString().getBytes(StandardCharsets.US_ASCII));
            InputStream in = socket.getInputStream();
            StringBuilder head = new StringBuilder();
            while (!head.toString().endsWith("\r\n\r\n")) {
                int c = in.read();
                if (c < 0) {
                    throw new EOFException("closed during the handshake: " + head);
                }
                head.append((char) c);
            }
            assertTrue(head.toString().startsWith("HTTP/1.1 101"), head.toString());
            // from here on nothing is read
        }

        @Override
        public void close() throws IOException {
            socket.setSoLinger(true, 0); // reset: the server side ends at once
            socket.close();
        }
    }

    static Map<String, Object> todo(String id, String title) {
        return Map.of("id", id, "list_id", "l1", "title", title, "done", false, "position", 1L, "updated_at_ms", 1L);
    }

    URI url(String partition, String clientId) {
        return URI.create(base.toString().replaceFirst("^http", "ws") + "realtime?clientId=" + clientId);
    }

    @Test
    void drainClosesEverySocketConcurrentlyWithinTheGracePeriod() throws Exception {
        // the deaf clients first: registered (pulled at the head, so deltas flow to them at once)
        String deafPartition = "drain-deaf-" + UUID.randomUUID();
        Map<String, String> deafHeaders = Map.of("x-actor-id", "dora", "x-syncular-partition", deafPartition);
        SyncTestClient writer = new SyncTestClient(
                window.current(),
                new HttpTransport(base.toString(), deafPartition),
                "wanda",
                "writer-" + UUID.randomUUID());
        writer.upsert("todos", todo("seed", "x"), null);
        writer.sync(); // a log to pull up to: the deaf clients are at its head, not behind (§8.1 requiresSync)
        List<Deaf> deaf = new ArrayList<>();
        for (int i = 0; i < STUCK; i++) {
            SyncTestClient d = new SyncTestClient(
                    window.current(), new HttpTransport(base.toString(), deafPartition), "dora", "deaf-" + i);
            d.subscribe("s1", "todos", Map.of("list_id", List.of("l1")));
            d.syncUntilIdle();
            deaf.add(new Deaf(base, deafHeaders, "deaf-" + i));
        }
        String partition = "drain-" + UUID.randomUUID();
        Map<String, String> headers = Map.of("x-actor-id", "bob", "x-syncular-partition", partition);
        long connectStart = System.nanoTime();
        List<RealtimeSocket> sockets = new ArrayList<>();
        for (int batch = 0; batch < SOCKETS; batch += 100) {
            List<CompletableFuture<RealtimeSocket>> opening = new ArrayList<>();
            for (int i = batch; i < Math.min(SOCKETS, batch + 100); i++) {
                opening.add(RealtimeSocket.connectAsync(url(partition, "c-" + i), headers));
            }
            opening.forEach(f -> sockets.add(f.join()));
        }
        for (RealtimeSocket s : sockets) {
            s.nextEvent("hello"); // the session is registered with the hub (before its hello)
        }
        LOG.infof(
                "%d sockets open in %d ms",
                SOCKETS + STUCK, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - connectStart));
        assertEquals(SOCKETS + STUCK, realtime.hub().openConnections());
        // then the flood: every deaf client is sent far more than the buffers toward it hold
        String big = "x".repeat(100_000);
        for (int i = 0; i < FLOOD_COMMITS; i++) {
            writer.upsert("todos", todo("r" + i, big), null);
            writer.sync();
        }

        long start = System.nanoTime();
        realtime.hub().drain(GRACE);
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        LOG.infof("drain of %d sockets took %d ms", SOCKETS + STUCK, tookMs);
        assertTrue(tookMs <= GRACE.toMillis() + 500, "drain took " + tookMs + " ms, grace " + GRACE.toMillis() + " ms");
        for (RealtimeSocket s : sockets) {
            assertEquals(1001, s.closed.get(RealtimeSocket.WAIT.toSeconds(), TimeUnit.SECONDS), "going away");
        }
        // a client that resets its connection is an ordinary disconnect: DEBUG, counted, no ERROR line
        try (LogCapture all = LogCapture.of("", Level.WARNING, "requestId");
                LogCapture failures = LogCapture.of(RealtimeFailures.class.getName(), Level.FINE, "requestId")) {
            for (Deaf d : deaf) {
                d.close();
            }
            failures.await(l -> l.message().contains("connection failed, the connection is gone"), RealtimeSocket.WAIT);
            assertTrue(
                    all.lines.stream().noneMatch(l -> l.category().startsWith("io.quarkus.websockets")),
                    "an abrupt disconnect is no ERROR: " + all.lines);
        }
    }
}
