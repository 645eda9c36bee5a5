package dev.syncular.server.http;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.blobs.BlobIds;
import dev.syncular.server.sync.SyncScenariosContract;
import dev.syncular.server.testsupport.GrantTable;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.NotesAppProfile;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestS3;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * The S3 stores hold no thread per outstanding S3 call (issue 44, hole 5): blobs on an "S3" that accepts
 * connections and never answers (a plain {@link ServerSocket} of the test: a real TCP peer that stays silent).
 * {@value #CALLS} downloads through the pod (§5.9.5: each a HEAD on the object first) — three times the 16 threads
 * the old synchronous client's pool had — are all in flight at once: the silent peer accepts a connection for
 * each, where the old pool connected 16 and queued the rest. Meanwhile a sync round, which needs no S3, is served;
 * then every download is answered together when the S3 API call timeout ({@value #API_TIMEOUT_SECONDS} s) ends
 * its call, not in waves of 16 one timeout apart — each 429 {@code sync.rate_limited} with {@code Retry-After} and
 * reason {@code storage_unavailable} (§10.2: an outage of the object store is never a 500; the client retries).
 */
@QuarkusTest
@OwnApp
@TestProfile(S3StuckCallsTest.SilentS3.class)
class S3StuckCallsTest {
    static final int CALLS = 48;
    static final int API_TIMEOUT_SECONDS = 6;
    private static final String PORT_PROPERTY = "test.silent-s3-port";

    /** Blobs on the silent peer's port (picked once per JVM; the test binds it). */
    public static class SilentS3 implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            Map<String, String> m = new HashMap<>(TestS3.quarkusConfig("http://127.0.0.1:" + silentPort()));
            m.putAll(NotesAppProfile.notesIn("sync_s3stuck_"));
            m.put("syncular.blobs.store", "s3");
            m.put("syncular.s3.bucket", "silent");
            m.put("quarkus.s3.api-call-timeout", API_TIMEOUT_SECONDS + "S");
            return m;
        }

        @Override
        public Set<Class<?>> getEnabledAlternatives() {
            return Set.of(GrantTable.class);
        }
    }

    /** A free port, the same for every class loader of this JVM (a system property). */
    static synchronized int silentPort() {
        String p = System.getProperty(PORT_PROPERTY);
        if (p == null) {
            try (ServerSocket probe = new ServerSocket(0)) {
                p = Integer.toString(probe.getLocalPort());
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            System.setProperty(PORT_PROPERTY, p);
        }
        return Integer.parseInt(p);
    }

    @Inject
    GrantTable grants;

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    @Test
    void outstandingS3CallsHoldNoThreadAndTimeOutTogether() throws Exception {
        String partition = "tenant-" + UUID.randomUUID();
        grants.grant(partition, "alice", Map.of("project_id", List.of("p1")));
        List<Socket> accepted = new CopyOnWriteArrayList<>();
        Semaphore connections = new Semaphore(0);
        HttpClient http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(10))
                .build();
        try (ServerSocket silent = new ServerSocket(silentPort(), 200, InetAddress.getLoopbackAddress())) {
            Thread acceptor = new Thread(() -> {
                try {
                    while (true) {
                        accepted.add(silent.accept()); // kept open, never read from nor written to
                        connections.release();
                    }
                } catch (IOException closed) {
                    // the test is over
                }
            });
            acceptor.setDaemon(true);
            acceptor.start();

            long started = System.nanoTime();
            List<CompletableFuture<HttpResponse<String>>> downloads = new ArrayList<>();
            for (int i = 0; i < CALLS; i++) {
                String blobId = BlobIds.of(
                        MessageDigest.getInstance("SHA-256").digest(("stuck-" + i).getBytes(StandardCharsets.UTF_8)));
                HttpRequest get = HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/blobs/" + blobId))
                        .header("x-actor-id", "alice")
                        .header("x-syncular-partition", partition)
                        .timeout(Duration.ofSeconds(60))
                        .build();
                downloads.add(http.sendAsync(get, HttpResponse.BodyHandlers.ofString()));
            }

            // every call is in flight at once: a connection each (the old pool of 16 threads held 16)
            assertTrue(
                    connections.tryAcquire(CALLS, API_TIMEOUT_SECONDS - 1, TimeUnit.SECONDS),
                    "connections the silent S3 accepted before the API timeout: " + accepted.size());

            // a round that needs no S3 is served meanwhile
            SyncTestClient alice = new SyncTestClient(
                            SyncScenariosContract.SCHEMA,
                            new HttpTransport("http://localhost:" + port, partition),
                            "alice",
                            "alice-" + UUID.randomUUID())
                    .subscribe("att", "attachments", Map.of("project_id", List.of("p1")));
            alice.syncUntilIdle();
            assertTrue(alice.table("attachments").isEmpty());
            assertFalse(downloads.stream().anyMatch(CompletableFuture::isDone), "the downloads are still waiting");

            // all answered together, at the API timeout: not in waves of the old pool's size
            CompletableFuture.allOf(downloads.toArray(CompletableFuture[]::new))
                    .get(4L * API_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            long allAnsweredMs = (System.nanoTime() - started) / 1_000_000;
            assertTrue(allAnsweredMs >= API_TIMEOUT_SECONDS * 1000L, "answered before the timeout: " + allAnsweredMs);
            assertTrue(
                    allAnsweredMs < 2L * API_TIMEOUT_SECONDS * 1000L,
                    "the last download answered " + allAnsweredMs + " ms after the first was sent");
            // each one a backend outage, never a 500 (§10.2): 429 storage_unavailable with Retry-After, as a refused S3
            for (CompletableFuture<HttpResponse<String>> d : downloads) {
                S3OutageAnswersTest.assertStorageUnavailable(d.get());
            }
        } finally {
            for (Socket s : accepted) {
                s.close();
            }
        }
    }
}
