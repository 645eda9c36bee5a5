package dev.syncular.server.realtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.testsupport.RealtimeSocket;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;
import org.junit.jupiter.api.Test;

/**
 * Drain with many sockets, through the running app (docs/REALTIME.md "Drain and Kubernetes"): 2,000 open
 * sockets — and 20 whose clients read nothing, not even the close — are all sent 1001 at once, and the drain
 * returns within its grace period; every reading client sees its 1001 (going away). The app is left draining,
 * so this class has a profile of its own.
 */
@QuarkusTest
@TestProfile(DrainTest.Profile.class)
class DrainTest {
    private static final Logger LOG = Logger.getLogger(DrainTest.class);
    static final int SOCKETS = 2_000;
    static final int STUCK = 20;
    static final Duration GRACE = Duration.ofSeconds(5);

    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("syncular.storage.pg-schema", "sync_drain_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8),
                    // no heartbeats during the test: the sockets that read nothing would be reaped
                    "syncular.realtime.heartbeat-interval", "10m");
        }
    }

    @TestHTTPResource("/")
    URI base;

    @Inject
    PodRealtime realtime;

    /** A client that reads nothing after the upgrade: it never answers the close. */
    static final class Deaf implements WebSocket.Listener {
        @Override
        public void onOpen(WebSocket webSocket) {
            // no request(n): nothing is read
        }
    }

    URI url(String partition, String clientId) {
        return URI.create(base.toString().replaceFirst("^http", "ws") + "realtime?clientId=" + clientId);
    }

    @Test
    void drainClosesEverySocketConcurrentlyWithinTheGracePeriod() throws Exception {
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
        HttpClient deafClient = HttpClient.newHttpClient();
        List<WebSocket> deaf = new ArrayList<>();
        for (int i = 0; i < STUCK; i++) {
            WebSocket.Builder b = deafClient.newWebSocketBuilder();
            headers.forEach(b::header);
            deaf.add(b.buildAsync(url(partition, "deaf-" + i), new Deaf()).get(30, TimeUnit.SECONDS));
        }
        for (RealtimeSocket s : sockets) {
            s.nextEvent("hello"); // the session is registered with the hub (before its hello)
        }
        LOG.infof("%d sockets open in %d ms", SOCKETS + STUCK, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - connectStart));
        assertEquals(SOCKETS + STUCK, realtime.hub().openConnections());

        long start = System.nanoTime();
        realtime.hub().drain(GRACE);
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        LOG.infof("drain of %d sockets took %d ms", SOCKETS + STUCK, tookMs);
        assertTrue(tookMs <= GRACE.toMillis() + 500, "drain took " + tookMs + " ms, grace " + GRACE.toMillis() + " ms");
        for (RealtimeSocket s : sockets) {
            assertEquals(1001, s.closed.get(RealtimeSocket.WAIT.toSeconds(), TimeUnit.SECONDS), "going away");
        }
        deaf.forEach(WebSocket::abort);
    }
}
