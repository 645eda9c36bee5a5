package dev.syncular.server.deploy;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.github.luben.zstd.ZstdInputStream;
import dev.syncular.server.blobs.BlobIds;
import dev.syncular.server.cli.HttpFailure;
import dev.syncular.server.jobs.BackfillCommand;
import dev.syncular.server.sync.SyncScenariosContract;
import dev.syncular.server.testsupport.BlobHttp;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.Notes;
import dev.syncular.server.testsupport.PackagedServer;
import dev.syncular.server.testsupport.PrometheusScrape;
import dev.syncular.server.testsupport.Readiness;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.ServerProcess;
import dev.syncular.server.testsupport.StartsProcesses;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestS3;
import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.MediaType;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.MessageDecoder;
import dev.syncular.server.wire.PullHeader;
import dev.syncular.server.wire.PushOperation;
import dev.syncular.server.wire.SegmentRef;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;
import io.restassured.RestAssured;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The packaged artifact as it ships — the fast jar here, the native executable in the native workflow
 * ({@code .github/workflows/native.yml}, {@code -Dnative}) — driven from outside through HTTP and WebSocket with
 * segments and blobs in a signature-checking S3 server: a sync round (and a zstd-coded response), a bootstrap
 * through presigned segment URLs (rows pages and a SQLite image), a blob upload and download through the
 * bucket, a realtime delta, the operator endpoints, and the readiness lifecycle of a backfill checkpoint run to
 * activation by the same artifact's one-shot {@code backfill} command.
 */
@StartsProcesses
@QuarkusIntegrationTest
@QuarkusTestResource(value = PackagedServer.class, restrictToAnnotatedClass = true)
class PackagedServiceIT {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private static String base() {
        return "http://localhost:" + RestAssured.port;
    }

    private static SyncTestClient client(String partition, String actor) {
        return new SyncTestClient(
                        SyncScenariosContract.SCHEMA,
                        new HttpTransport(base(), partition),
                        actor,
                        actor + "-" + UUID.randomUUID())
                .subscribe("notes", "notes", Map.of("project_id", List.of("p1")));
    }

    /** A writer that pushed {@code count} notes of p1 in one commit and synced. */
    private static SyncTestClient seeded(String partition, int count, Long priority) {
        SyncTestClient writer = client(partition, "alice");
        List<PushOperation> ops = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            ops.add(writer.upsertOp("notes", Notes.note(String.format("n%04d", i), priority), null));
        }
        writer.commit(ops);
        writer.syncUntilIdle();
        return writer;
    }

    private static void readiness(int status) {
        Readiness.await(status, WAIT);
    }

    @Test
    void syncRoundWithAZstdCodedResponse() throws Exception {
        String partition = "p-" + UUID.randomUUID();
        SyncTestClient alice = seeded(partition, 3, 1L);
        SyncTestClient bob = client(partition, "bob");
        bob.syncUntilIdle();
        assertEquals(alice.table("notes").keySet(), bob.table("notes").keySet());
        assertEquals(3, bob.table("notes").size());

        // bob's next pull, answered zstd-coded (zstd-jni in the server), carries alice's new commit: over
        // 1 KiB, so it is compressed (§1.3; smaller responses go identity-coded)
        Map<String, Object> z1 = new HashMap<>(Notes.note("z1", 4L));
        z1.put("body", "a body long enough to be worth compressing. ".repeat(40));
        alice.upsert("notes", z1, null);
        alice.sync();
        HttpResponse<byte[]> r = HTTP.send(
                HttpRequest.newBuilder(URI.create(base() + "/sync"))
                        .header("content-type", HttpTransport.CONTENT_TYPE)
                        .header("accept-encoding", "zstd")
                        .header("x-actor-id", "bob")
                        .header("x-syncular-partition", partition)
                        .POST(HttpRequest.BodyPublishers.ofByteArray(
                                bob.buildRequest().encode()))
                        .build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertEquals(200, r.statusCode());
        assertEquals("zstd", r.headers().firstValue("content-encoding").orElse(""));
        byte[] plain;
        try (ZstdInputStream in = new ZstdInputStream(new ByteArrayInputStream(r.body()))) {
            plain = in.readAllBytes();
        }
        Message response = MessageDecoder.decodeResponse(plain);
        CommitFrame commit = (CommitFrame) response.frames().stream()
                .filter(CommitFrame.class::isInstance)
                .findFirst()
                .orElseThrow(() -> new AssertionError("no commit in " + response.frames()));
        assertEquals("z1", commit.changes().get(0).rowId());
    }

    @Test
    void bootstrapThroughPresignedSegmentUrlsAndASqliteImage() {
        String partition = "p-" + UUID.randomUUID();
        seeded(partition, 150, 2L);
        SyncTestClient rows = client(partition, "bob");
        rows.accept = PullHeader.ACCEPT_EXTERNAL_ROWS | PullHeader.ACCEPT_SIGNED_URLS;
        rows.limitSnapshotRows = 40;
        rows.syncUntilIdle();
        assertEquals(150, rows.table("notes").size());
        assertTrue(rows.urlFetches >= 4, "one segment URL per page of 40: " + rows.urlFetches);
        assertEquals(0, rows.segmentDownloads, "every segment came from the bucket");
        for (SegmentRef ref : rows.segmentRefs) {
            assertTrue(ref.url().startsWith(TestS3.endpoint() + "/"), ref.url());
        }

        SyncTestClient image = client(partition, "carol");
        image.accept = PullHeader.ACCEPT_EXTERNAL_ROWS | PullHeader.ACCEPT_SIGNED_URLS | PullHeader.ACCEPT_SQLITE;
        image.limitSnapshotRows = 40;
        image.syncUntilIdle();
        assertEquals(1, image.segmentRefs.size(), "one SQLite image (sqlite-jdbc in the server)");
        assertEquals(MediaType.SQLITE, image.segmentRefs.get(0).mediaType());
        assertEquals(rows.table("notes").keySet(), image.table("notes").keySet());
    }

    @Test
    void blobUploadThroughTheServerAndPresignedDownload() throws IOException {
        String partition = "p-" + UUID.randomUUID();
        BlobHttp blobs = new BlobHttp(base(), partition);
        byte[] bytes = new byte[20_000];
        new Random(7).nextBytes(bytes);
        String id = BlobIds.compute(bytes);
        HttpResponse<byte[]> put = blobs.put("alice", id, bytes);
        assertEquals(200, put.statusCode(), BlobHttp.text(put));

        SyncTestClient alice =
                client(partition, "alice").subscribe("att", "attachments", Map.of("project_id", List.of("p1")));
        Map<String, Object> row = new HashMap<>();
        row.put("id", "a1");
        row.put("project_id", "p1");
        row.put("caption", "cat");
        row.put("file", "{\"blobId\":\"" + id + "\",\"byteLength\":" + bytes.length + ",\"mediaType\":\"image/png\"}");
        String commit = alice.upsert("attachments", row, null);
        alice.syncUntilIdle();
        assertTrue(SyncTestClient.applied(alice.result(commit)), String.valueOf(alice.result(commit)));

        HttpResponse<byte[]> grant = blobs.get("bob", id);
        assertEquals(200, grant.statusCode(), BlobHttp.text(grant));
        JsonNode download = JSON.readTree(grant.body());
        String url = download.get("url").asText();
        assertTrue(url.startsWith(TestS3.endpoint() + "/"), "a presigned URL of the bucket: " + url);
        HttpResponse<byte[]> fetched = BlobHttp.fetch(url);
        assertEquals(200, fetched.statusCode());
        assertArrayEquals(bytes, fetched.body());
    }

    @Test
    void realtimeDeltaOverTheWebSocket() throws Exception {
        String partition = "p-" + UUID.randomUUID();
        SyncTestClient alice = seeded(partition, 1, 1L);
        SyncTestClient bob = client(partition, "bob");
        bob.syncUntilIdle();
        RealtimeSocket socket = RealtimeSocket.connect(base() + "/", partition, "bob", bob.clientId);
        try {
            JsonNode hello = socket.nextEvent("hello").get("data");
            if (hello.get("requiresSync").asBoolean()) {
                socket.ack(bob.subscriptions.get("notes").cursor);
                socket.round(bob.buildRequest().encode(), 1 << 16); // answered once the ack is applied
            }
            long before = bob.subscriptions.get("notes").cursor;
            alice.upsert("notes", Notes.note("live", 5L), null);
            alice.sync();
            CommitFrame commit = assertInstanceOf(
                    CommitFrame.class, socket.nextDelta().frames().get(2));
            assertEquals(before + 1, commit.commitSeq());
            assertEquals("live", commit.changes().get(0).rowId());
        } finally {
            socket.ws.abort();
        }
    }

    @Test
    void operatorEndpoints() {
        given().get("/q/health/started").then().statusCode(200).body(containsString("schema-migration"));
        given().get("/q/health/live").then().statusCode(200);
        readiness(200);
        client("p-" + UUID.randomUUID(), "alice").syncUntilIdle();
        // metrics and OpenAPI on the management interface only, never on the API port
        int management = PrometheusScrape.managementTestPort();
        given().port(management)
                .get("/q/metrics")
                .then()
                .statusCode(200)
                .body(containsString("syncular_sync_rounds_seconds_count"));
        given().port(management)
                .get("/q/openapi?format=json")
                .then()
                .statusCode(200)
                .body(containsString("/admin/partitions"));
        given().get("/q/metrics").then().statusCode(404);
        given().get("/q/openapi").then().statusCode(404);
        given().header("Authorization", "Bearer " + PackagedServer.ADMIN_TOKEN)
                .get("/admin/segments")
                .then()
                .statusCode(200)
                .body(containsString("\"store\""));
        given().get("/admin/segments").then().statusCode(401);
    }

    @Test
    void checkpointReadinessLifecycleRunByTheBackfillCommand() throws Exception {
        String partition = "p-" + UUID.randomUUID();
        SyncTestClient alice = seeded(partition, 5, null);
        readiness(200);

        // a checkpoint this server does not declare: readiness DOWN, its partition refused
        given().header("Authorization", "Bearer " + PackagedServer.ADMIN_TOKEN)
                .contentType("application/json")
                .body("{\"partition\":\"" + partition + "\",\"name\":\"fill-priority\",\"schemaVersion\":1}")
                .post("/admin/checkpoints/declare")
                .then()
                .statusCode(200);
        readiness(503);
        HttpFailure refused = assertThrows(HttpFailure.class, alice::sync);
        assertEquals(503, refused.status);
        assertTrue(refused.body.contains("sync.schema_not_ready"), refused.body);

        // the same artifact, one-shot: claim, fill in pages with the watermark, activate, exit 0
        Map<String, String> config = PackagedServer.config();
        ServerProcess.Result run = ServerProcess.builder("packaged-backfill", config.get("syncular.storage.pg-schema"))
                .config(config)
                .args(List.of(
                        BackfillCommand.NAME,
                        "--partition",
                        partition,
                        "--checkpoint",
                        "fill-priority",
                        "--schema-version",
                        "1",
                        "--table",
                        "notes",
                        "--set",
                        "priority=7",
                        "--batch-size",
                        "2"))
                .run(Duration.ofMinutes(3));
        assertEquals(BackfillCommand.EXIT_OK, run.exitCode(), run.log());
        assertTrue(run.log().contains("activated at watermark 4 (5 rows filled)"), run.log());

        readiness(200);
        SyncTestClient bob = client(partition, "bob");
        bob.syncUntilIdle();
        int priority = SyncScenariosContract.SCHEMA.table("notes").columnIndex("priority");
        assertEquals(5, bob.table("notes").size());
        bob.table("notes").forEach((id, row) -> assertEquals(7L, row.values()[priority], id));
        alice.syncUntilIdle();
    }
}
