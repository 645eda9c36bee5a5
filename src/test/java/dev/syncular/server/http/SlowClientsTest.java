package dev.syncular.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.blobs.BlobIds;
import dev.syncular.server.memory.BufferBudget;
import dev.syncular.server.sync.SyncScenariosContract;
import dev.syncular.server.testsupport.BlobHttp;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.RawHttp;
import dev.syncular.server.testsupport.SyncTestClient;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * Slow clients (issue #26, item 2) through the running app, with {@code syncular.limits.body-timeout=1s},
 * {@code body-min-rate=1K} and {@code quarkus.http.idle-timeout=2s}: a body that trickles or stalls is cut off
 * with 408 §10.1 JSON within the configured time and its connection closed, its bytes given back to the buffer
 * budget; a blob upload, read by the same body reader but spooled rather than held, is cut off when it stalls
 * and not held to the minimum rate; a request head that stalls (slowloris) is closed by the idle timeout; other
 * clients are served.
 */
@QuarkusTest
@OwnApp
@TestProfile(SlowClientsTest.Slow.class)
class SlowClientsTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    public static class Slow implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "syncular.schema.path",
                    Path.of("src/test/resources/schema/notes.json")
                            .toAbsolutePath()
                            .toString(),
                    "syncular.storage.pg-schema",
                    "sync_slow_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10),
                    "syncular.limits.body-timeout",
                    "1s",
                    "syncular.limits.body-min-rate",
                    "1K",
                    "quarkus.http.idle-timeout",
                    "2s");
        }
    }

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    @Inject
    BufferBudget budget;

    private final String partition = "p-" + UUID.randomUUID();

    private RawHttp head(long declared) throws IOException {
        Map<String, String> h = new LinkedHashMap<>();
        h.put("Content-Type", HttpTransport.CONTENT_TYPE);
        h.put("x-actor-id", "alice");
        h.put("x-syncular-partition", partition);
        h.put("Content-Length", String.valueOf(declared));
        return RawHttp.open("localhost", port).head("POST", "/sync", h);
    }

    private static void assertTooSlow(RawHttp.Answer a) throws IOException {
        assertEquals(408, a.status(), a.body());
        assertTrue(
                a.headers().getOrDefault("content-type", "").startsWith("application/json"),
                a.headers().toString());
        JsonNode n = JSON.readTree(a.body());
        assertEquals("sync.invalid_request", n.path("code").asText(), a.body());
        assertEquals("invalid-request", n.path("category").asText(), a.body());
        assertEquals("close", a.headers().get("connection"), a.headers().toString());
    }

    private void assertServed() {
        new SyncTestClient(
                        SyncScenariosContract.SCHEMA,
                        new HttpTransport("http://localhost:" + port, partition),
                        "alice",
                        "c-" + UUID.randomUUID())
                .subscribe("s", "notes", Map.of("project_id", List.of("p1")))
                .syncUntilIdle();
    }

    /** 16 bytes every 100 ms (160 B/s, under the 1 KiB/s minimum): 408 once the 1 s grace has passed. */
    @Test
    void aTricklingBodyIsCutOffWith408() throws Exception {
        ScheduledExecutorService trickle = Executors.newSingleThreadScheduledExecutor();
        try (RawHttp http = head(1024 * 1024)) {
            long start = System.nanoTime();
            trickle.scheduleAtFixedRate(
                    () -> {
                        try {
                            http.write(new byte[16]);
                        } catch (IOException closed) {
                            throw new IllegalStateException(closed); // ends the schedule
                        }
                    },
                    0,
                    100,
                    TimeUnit.MILLISECONDS);
            assertTooSlow(http.read());
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            assertTrue(
                    took.compareTo(Duration.ofMillis(900)) >= 0 && took.compareTo(Duration.ofSeconds(5)) < 0,
                    "cut after " + took);
            assertTrue(http.closedByServer(), "the connection is closed after the 408");
        } finally {
            trickle.shutdownNow();
        }
        assertEquals(0, budget.inUse(), "the trickled bytes are given back");
        assertServed();
    }

    /** A body that stops arriving: 408 after 1 s without a byte. */
    @Test
    void aStalledBodyIsCutOffWith408() throws Exception {
        assertCutOffAfterAStall(head(4096), new byte[100]);
    }

    /**
     * A blob upload (§5.9.3) is read by the same body reader as {@code /sync}: a body that stops arriving is cut
     * off with 408 after 1 s without a byte, its connection closed.
     */
    @Test
    void aStalledBlobUploadIsCutOffWith408() throws Exception {
        byte[] blob = new byte[4096];
        assertCutOffAfterAStall(blobHead(blob), Arrays.copyOf(blob, 100));
    }

    /**
     * A blob upload is spooled to a file as it arrives, never held: the minimum rate (which guards held bytes) does
     * not apply — 16 bytes every 100 ms (160 B/s) for 2.5 s is stored, and the blob is served back.
     */
    @Test
    void aSlowBlobUploadIsStoredWithoutTheMinimumRate() throws Exception {
        byte[] blob = new byte[400];
        new Random(7).nextBytes(blob);
        ScheduledExecutorService trickle = Executors.newSingleThreadScheduledExecutor();
        try (RawHttp http = blobHead(blob)) {
            int[] sent = new int[1];
            trickle.scheduleAtFixedRate(
                    () -> {
                        try {
                            if (sent[0] < blob.length) {
                                http.write(Arrays.copyOfRange(blob, sent[0], Math.min(blob.length, sent[0] + 16)));
                                sent[0] += 16;
                            }
                        } catch (IOException closed) {
                            throw new IllegalStateException(closed); // ends the schedule
                        }
                    },
                    0,
                    100,
                    TimeUnit.MILLISECONDS);
            RawHttp.Answer a = http.read();
            assertEquals(200, a.status(), a.body());
        } finally {
            trickle.shutdownNow();
        }
        // stored: the upload grant answers that the blob is present (§5.9.3)
        HttpResponse<byte[]> grant = new BlobHttp("http://localhost:" + port, partition)
                .grant("alice", BlobIds.compute(blob), "{\"byteLength\":" + blob.length + "}");
        assertEquals(200, grant.statusCode(), BlobHttp.text(grant));
        assertTrue(JSON.readTree(grant.body()).path("present").asBoolean(), BlobHttp.text(grant));
        assertEquals(0, budget.inUse(), "a spooled body holds nothing of the buffer budget");
        assertServed();
    }

    private RawHttp blobHead(byte[] blob) throws IOException {
        Map<String, String> h = new LinkedHashMap<>();
        h.put("Content-Type", "application/octet-stream");
        h.put("x-actor-id", "alice");
        h.put("x-syncular-partition", partition);
        h.put("Content-Length", String.valueOf(blob.length));
        return RawHttp.open("localhost", port).head("PUT", "/blobs/" + BlobIds.compute(blob), h);
    }

    /** Slowloris: a request head that never ends is closed by the idle timeout, without holding anything. */
    @Test
    void aStalledRequestHeadIsClosed() throws Exception {
        try (RawHttp http = RawHttp.open("localhost", port)) {
            long start = System.nanoTime();
            http.write("POST /sync HTTP/1.1\r\nHost: localhost\r\nx-actor-id: alice\r\nX-Slow: "
                    .getBytes(StandardCharsets.US_ASCII));
            assertTrue(http.closedByServer(), "closed");
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            assertTrue(
                    took.compareTo(Duration.ofMillis(1500)) >= 0 && took.compareTo(Duration.ofSeconds(10)) < 0,
                    "closed after " + took);
        }
        assertServed();
    }

    /** {@code part} of a body, then nothing: answered 408 within 5 s, the connection closed, the server still serving. */
    private void assertCutOffAfterAStall(RawHttp opened, byte[] part) throws Exception {
        try (RawHttp http = opened) {
            long start = System.nanoTime();
            http.write(part);
            assertTooSlow(http.read());
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            assertTrue(took.compareTo(Duration.ofSeconds(5)) < 0, "cut after " + took);
            assertTrue(http.closedByServer());
        }
        assertServed();
    }
}
