package dev.syncular.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.syncular.server.blobs.BlobIds;
import dev.syncular.server.cli.ServerConnection;
import dev.syncular.server.sync.SyncScenariosContract;
import dev.syncular.server.testsupport.GrantTable;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.Notes;
import dev.syncular.server.testsupport.NotesAppProfile;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestS3;
import dev.syncular.server.wire.PullHeader;
import dev.syncular.server.wire.PushOperation;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
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
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * A backend outage is never a 500 (§10.2 "host adapter errors"): with segments (§5.1) and blobs (§5.9) on an "S3"
 * that is up but failing — a real HTTP peer of the test ({@link StandIn}, the JDK HTTP server) that answers the
 * start-up's bucket check and then either answers every request {@code 503 SlowDown} with S3's XML error body, or
 * accepts every request and never answers — a sync round that must publish a bootstrap segment, the direct segment
 * download (§5.5) and a blob download (§5.9.5) are each answered 429 {@code sync.rate_limited} with
 * {@code Retry-After} and {@code details.reason} {@code storage_unavailable}: what a refused S3 connection is
 * answered, so the client retries. The silent case ends at {@code quarkus.s3.api-call-timeout}
 * ({@value #API_TIMEOUT_SECONDS} s). S3StuckCallsTest covers the silent blob downloads under load.
 */
@QuarkusTest
@OwnApp
@TestProfile(S3OutageAnswersTest.FailingS3.class)
class S3OutageAnswersTest {
    static final int API_TIMEOUT_SECONDS = 6;
    static final String BUCKET = "standin";
    /** The stand-in's behaviour, a system property: the test and the stand-in may live in different class loaders. */
    static final String MODE_PROPERTY = "test.s3-standin.mode";

    static final String SLOW_DOWN = "slowdown";
    static final String SILENT = "silent";

    private static final ObjectMapper JSON = new ObjectMapper();

    /** Segments and blobs on the stand-in. */
    public static class FailingS3 implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            Map<String, String> m = new HashMap<>(TestS3.quarkusConfig("${test.s3-standin.endpoint}"));
            m.putAll(NotesAppProfile.notesIn("sync_s3outage_"));
            m.put("syncular.segments.store", "s3");
            m.put("syncular.blobs.store", "s3");
            m.put("syncular.s3.bucket", BUCKET);
            m.put("quarkus.s3.api-call-timeout", API_TIMEOUT_SECONDS + "S");
            return m;
        }

        @Override
        public Set<Class<?>> getEnabledAlternatives() {
            return Set.of(GrantTable.class);
        }

        @Override
        public List<TestResourceEntry> testResources() {
            return List.of(new TestResourceEntry(StandIn.class));
        }
    }

    /**
     * The failing S3: {@code HEAD /<bucket>} (the start-up's bucket check) is 200; every other request is
     * {@code 503 SlowDown} with S3's XML error body, or, in {@value #SILENT} mode, read and never answered.
     */
    public static class StandIn implements QuarkusTestResourceLifecycleManager {
        private static final byte[] SLOW_DOWN_BODY = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error>"
                        + "<Code>SlowDown</Code><Message>Please reduce your request rate.</Message>"
                        + "<RequestId>standin</RequestId></Error>")
                .getBytes(StandardCharsets.UTF_8);
        private HttpServer server;
        private final List<HttpExchange> held = new CopyOnWriteArrayList<>();

        @Override
        public Map<String, String> start() {
            try {
                server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 200);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            server.setExecutor(Executors.newCachedThreadPool(r -> {
                Thread t = new Thread(r, "s3-standin");
                t.setDaemon(true);
                return t;
            }));
            server.createContext("/", this::answer);
            server.start();
            return Map.of(
                    "test.s3-standin.endpoint",
                    "http://127.0.0.1:" + server.getAddress().getPort());
        }

        private void answer(HttpExchange exchange) throws IOException {
            exchange.getRequestBody().readAllBytes();
            String path = exchange.getRequestURI().getPath();
            boolean head = "HEAD".equals(exchange.getRequestMethod());
            if (head && (path.equals("/" + BUCKET) || path.equals("/" + BUCKET + "/"))) {
                exchange.sendResponseHeaders(200, -1);
                exchange.close();
            } else if (SILENT.equals(System.getProperty(MODE_PROPERTY))) {
                held.add(exchange); // accepted and read, never answered
            } else {
                exchange.getResponseHeaders().set("Content-Type", "application/xml");
                exchange.getResponseHeaders().set("x-amz-request-id", "standin");
                if (head) {
                    exchange.sendResponseHeaders(503, -1);
                } else {
                    exchange.sendResponseHeaders(503, SLOW_DOWN_BODY.length);
                    try (OutputStream out = exchange.getResponseBody()) {
                        out.write(SLOW_DOWN_BODY);
                    }
                }
                exchange.close();
            }
        }

        @Override
        public void stop() {
            if (server != null) {
                server.stop(0);
            }
            held.forEach(HttpExchange::close);
        }
    }

    @Inject
    GrantTable grants;

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    private final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10))
            .build();

    @Test
    void s3AnsweringSlowDownIsAnsweredStorageUnavailableOnEveryRoute() throws Exception {
        System.setProperty(MODE_PROPERTY, SLOW_DOWN);
        String partition = seededPartition();

        // a round that must publish its bootstrap page as a segment (external rows only, §4.2 accept bits)
        assertStorageUnavailable(bootstrapRound(partition));

        // the direct segment download (§5.5) reads the segment's record from S3
        String segmentId = BlobIds.of(sha256("no-such-segment"));
        assertStorageUnavailable(
                send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/segments/" + segmentId))
                        .header(ServerConnection.SCOPES_HEADER, "{\"project_id\":[\"p1\"]}")
                        .header("x-actor-id", "alice")
                        .header("x-syncular-partition", partition)));

        // a blob download (§5.9.5) HEADs the object first
        assertStorageUnavailable(send(HttpRequest.newBuilder(
                        URI.create("http://localhost:" + port + "/blobs/" + BlobIds.of(sha256("no-such-blob"))))
                .header("x-actor-id", "alice")
                .header("x-syncular-partition", partition)));
    }

    @Test
    void s3AcceptingAndNeverAnsweringIsAnsweredStorageUnavailableAtTheApiCallTimeout() throws Exception {
        System.setProperty(MODE_PROPERTY, SLOW_DOWN);
        String partition = seededPartition();
        System.setProperty(MODE_PROPERTY, SILENT);
        try {
            long started = System.nanoTime();
            HttpResponse<String> round = bootstrapRound(partition);
            long answeredMs = (System.nanoTime() - started) / 1_000_000;
            assertStorageUnavailable(round);
            assertTrue(
                    answeredMs >= API_TIMEOUT_SECONDS * 1000L, "answered before the API call timeout: " + answeredMs);
        } finally {
            System.setProperty(MODE_PROPERTY, SLOW_DOWN);
        }
    }

    /** A partition holding three notes of project p1 for alice (pushes need no S3). */
    private String seededPartition() {
        String partition = "tenant-" + UUID.randomUUID();
        grants.grant(partition, "alice", Map.of("project_id", List.of("p1")));
        SyncTestClient writer = new SyncTestClient(
                SyncScenariosContract.SCHEMA,
                new HttpTransport("http://localhost:" + port, partition),
                "alice",
                "writer-" + UUID.randomUUID());
        List<PushOperation> ops = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            ops.add(writer.upsertOp("notes", Notes.note("n-" + i, (long) i), null));
        }
        String commit = writer.commit(ops);
        writer.syncUntilIdle();
        assertTrue(SyncTestClient.applied(writer.result(commit)), "the seed commit applied");
        return partition;
    }

    /**
     * The bootstrap round of a reader of project p1 that takes bootstrap rows only as segments: its first round
     * learns the log epoch (§1.6 {@code resetRequired}, no rows), the second must publish the first page.
     */
    private HttpResponse<String> bootstrapRound(String partition) throws Exception {
        SyncTestClient reader = new SyncTestClient(
                        SyncScenariosContract.SCHEMA,
                        new HttpTransport("http://localhost:" + port, partition),
                        "alice",
                        "reader-" + UUID.randomUUID())
                .subscribe("notes-p1", "notes", Map.of("project_id", List.of("p1")));
        reader.accept = PullHeader.ACCEPT_EXTERNAL_ROWS;
        reader.sync();
        return send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/sync"))
                .header("Content-Type", HttpTransport.CONTENT_TYPE)
                .header("x-actor-id", "alice")
                .header("x-syncular-partition", partition)
                .POST(HttpRequest.BodyPublishers.ofByteArray(
                        reader.buildRequest().encode())));
    }

    private HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
        return http.send(
                request.timeout(Duration.ofSeconds(4L * API_TIMEOUT_SECONDS)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** 429 {@code sync.rate_limited}, {@code Retry-After: 1}, reason {@code storage_unavailable}: as a refused S3. */
    static void assertStorageUnavailable(HttpResponse<String> r) throws IOException {
        assertEquals(429, r.statusCode(), r.body());
        assertEquals("1", r.headers().firstValue("Retry-After").orElse(null), r.body());
        JsonNode body = JSON.readTree(r.body());
        assertEquals("sync.rate_limited", body.path("code").asText(), r.body());
        assertEquals("storage_unavailable", body.path("details").path("reason").asText(), r.body());
        assertEquals(1000, body.path("details").path("retryAfterMs").asLong(), r.body());
    }

    private static byte[] sha256(String text) throws Exception {
        return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
    }
}
