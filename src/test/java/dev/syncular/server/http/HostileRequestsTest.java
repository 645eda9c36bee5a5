package dev.syncular.server.http;

import static dev.syncular.server.sync.SyncScenariosContract.note;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.blobs.BlobIds;
import dev.syncular.server.cli.HttpFailure;
import dev.syncular.server.storage.StorableText;
import dev.syncular.server.sync.SyncScenariosContract;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.NotesAppProfile;
import dev.syncular.server.testsupport.PrometheusScrape;
import dev.syncular.server.testsupport.RawHttp;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.CommitStatus;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.Op;
import dev.syncular.server.wire.OpResult;
import dev.syncular.server.wire.PushCommit;
import dev.syncular.server.wire.PushOperation;
import dev.syncular.server.wire.PushResult;
import dev.syncular.server.wire.PushResultDetails;
import dev.syncular.server.wire.SegmentInline;
import dev.syncular.server.wire.SegmentRef;
import dev.syncular.server.wire.SubEnd;
import dev.syncular.server.wire.SubStart;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.ValidatableResponse;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Hostile and malformed input through the running app (issue #17): bodies are only read after the headers
 * and authentication passed, each route under its own cap (413 before any byte of a declared-oversized body, a
 * chunked body cut off while it is read); text the storage cannot hold — U+0000, over-long identifiers — and
 * out-of-range admin numbers are precise 400s (or, inside a push, a rejected commit, §1.7), never a 500; the
 * subscription cap; the per-round response budget (§1.4).
 */
@QuarkusTest
@TestProfile(NotesAppProfile.class)
class HostileRequestsTest {
    static final String TOKEN = NotesAppProfile.ADMIN_TOKEN;
    static final int BLOB_MAX = NotesAppProfile.BLOB_MAX_BYTES;
    private static final ObjectMapper JSON = new ObjectMapper();

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    private String partition;

    @BeforeEach
    void freshPartition() {
        partition = "p-" + UUID.randomUUID();
    }

    private SyncTestClient client(String clientId) {
        return new SyncTestClient(
                SyncScenariosContract.SCHEMA,
                new HttpTransport("http://localhost:" + port, partition),
                "alice",
                clientId);
    }

    private RawHttp raw() throws IOException {
        return RawHttp.open("localhost", port);
    }

    private Map<String, String> syncHeaders(boolean authenticated) {
        Map<String, String> h = new LinkedHashMap<>();
        h.put("Content-Type", HttpTransport.CONTENT_TYPE);
        if (authenticated) {
            h.put("x-actor-id", "alice");
            h.put("x-syncular-partition", partition);
        }
        return h;
    }

    private static Map<String, String> with(Map<String, String> headers, String name, String value) {
        Map<String, String> h = new LinkedHashMap<>(headers);
        h.put(name, value);
        return h;
    }

    private static JsonNode assertError(RawHttp.Answer a, int status, String code) throws IOException {
        assertEquals(status, a.status(), a.body());
        assertTrue(
                a.headers().getOrDefault("content-type", "").startsWith("application/json"),
                a.headers().toString());
        JsonNode n = JSON.readTree(a.body());
        assertEquals(code, n.path("code").asText(), a.body());
        return n;
    }

    private static JsonNode assertError(HttpFailure f, int status, String code) throws IOException {
        assertEquals(status, f.status, f.body);
        JsonNode n = JSON.readTree(f.body);
        assertEquals(code, n.path("code").asText(), f.body);
        return n;
    }

    /** Sends only the request's head — the declared body never comes — and reads the answer. */
    private RawHttp.Answer headOnly(String method, String path, Map<String, String> headers) throws IOException {
        try (RawHttp http = raw()) {
            return http.head(method, path, headers).read();
        }
    }

    // ------------------------------------------------------------------------------------ bodies

    /** A declared length over the route's cap is 413 JSON before any body byte was sent. */
    @Test
    void declaredLengthOverTheRouteCapIs413BeforeTheBody() throws IOException {
        String huge = String.valueOf(120L * 1024 * 1024);
        assertError(
                headOnly("POST", "/sync", with(syncHeaders(false), "Content-Length", huge)),
                413,
                "sync.invalid_request");
        assertError(
                headOnly("POST", "/sync", with(syncHeaders(true), "Content-Length", huge)),
                413,
                "sync.invalid_request");
        String blobId = BlobIds.compute(new byte[] {1});
        assertError(
                headOnly(
                        "POST",
                        "/blobs/" + blobId + "/upload-grant",
                        Map.of("Content-Type", "application/json", "Content-Length", huge)),
                413,
                "sync.invalid_request");
        assertError(
                headOnly(
                        "POST",
                        "/blobs/" + blobId + "/upload-grant",
                        Map.of(
                                "Content-Type",
                                "application/json",
                                "Content-Length",
                                String.valueOf(BlobResource.MAX_GRANT_BODY + 1),
                                "x-actor-id",
                                "alice")),
                413,
                "sync.invalid_request");
        JsonNode blob = assertError(
                headOnly(
                        "PUT",
                        "/blobs/" + blobId,
                        Map.of("Content-Length", String.valueOf(50L * 1024 * 1024), "x-actor-id", "alice")),
                413,
                "blob.too_large");
        assertEquals(50L * 1024 * 1024, blob.path("details").path("byteLength").asLong());
        assertError(
                headOnly(
                        "POST",
                        "/admin/checkpoints/declare",
                        Map.of(
                                "Content-Type",
                                "application/json",
                                "Authorization",
                                "Bearer " + TOKEN,
                                "Content-Length",
                                String.valueOf(99L * 1000 * 1000))),
                413,
                "sync.invalid_request");
    }

    /** Authentication comes from the headers alone: an unauthenticated request is refused before its body is read. */
    @Test
    void unauthenticatedRequestsAreRefusedBeforeTheBody() throws IOException {
        assertError(
                headOnly("POST", "/sync", with(syncHeaders(false), "Transfer-Encoding", "chunked")),
                401,
                "sync.auth_required");
        assertError(
                headOnly("POST", "/sync", with(syncHeaders(false), "Content-Length", "1000000")),
                401,
                "sync.auth_required");
        assertError(
                headOnly(
                        "POST",
                        "/admin/checkpoints/declare",
                        Map.of(
                                "Content-Type",
                                "application/json",
                                "Content-Length",
                                String.valueOf(99L * 1000 * 1000))),
                401,
                "sync.auth_required");
        String blobId = BlobIds.compute(new byte[] {2});
        assertError(
                headOnly(
                        "POST",
                        "/blobs/" + blobId + "/upload-grant",
                        Map.of("Content-Type", "application/json", "Content-Length", "100")),
                401,
                "sync.auth_required");
        assertError(
                headOnly("PUT", "/blobs/" + blobId, Map.of("Content-Length", String.valueOf(BLOB_MAX))),
                401,
                "sync.auth_required");
    }

    /** A chunked body (no declared length) is cut off at the cap while it arrives: the answer comes before its end. */
    @Test
    void chunkedBodyIsCutOffAtTheCapWhileRead() throws IOException {
        long cap = 16L * 1024 * 1024; // syncular.max-request-bytes default
        try (RawHttp http = raw()) {
            http.head("POST", "/sync", with(syncHeaders(true), "Transfer-Encoding", "chunked"));
            assertEquals(
                    cap + 1024 * 1024, http.pump(cap + 1024 * 1024, true), "the server takes the bytes it discards");
            // the terminating chunk was never sent
            assertError(http.read(), 413, "sync.invalid_request");
        }
        try (RawHttp http = raw()) {
            http.head(
                    "POST",
                    "/admin/checkpoints/declare",
                    Map.of(
                            "Content-Type",
                            "application/json",
                            "Authorization",
                            "Bearer " + TOKEN,
                            "Transfer-Encoding",
                            "chunked"));
            http.pump(AdminCheckpointsResource.MAX_BODY + 4096, true);
            assertError(http.read(), 413, "sync.invalid_request");
        }
        try (RawHttp http = raw()) {
            http.head(
                    "POST",
                    "/blobs/" + BlobIds.compute(new byte[] {3}) + "/upload-grant",
                    Map.of("Content-Type", "application/json", "x-actor-id", "alice", "Transfer-Encoding", "chunked"));
            http.pump(BlobResource.MAX_GRANT_BODY + 4096, true);
            assertError(http.read(), 413, "sync.invalid_request");
        }
        // the server still answers, on a fresh connection
        client("c-" + UUID.randomUUID())
                .subscribe("s", "notes", Map.of("project_id", List.of("p1")))
                .syncUntilIdle();
    }

    // ------------------------------------------------------------------------------------ text the storage cannot hold

    /** U+0000 (or an over-long identifier) in a request-level field is 400 before the round touches storage. */
    @Test
    void unstorableRequestLevelTextIs400() throws IOException {
        SyncTestClient ok =
                client("c-" + UUID.randomUUID()).subscribe("s", "notes", Map.of("project_id", List.of("p1")));
        ok.sync(); // the log epoch, so pushes are read
        String nul = "a\u0000b";
        assertField(client(nul).subscribe("s", "notes", Map.of("project_id", List.of("p1"))), "clientId");
        assertField(client("x".repeat(StorableText.MAX_KEY_BYTES + 1)), "clientId");
        assertField(
                client("c-" + UUID.randomUUID()).subscribe(nul, "notes", Map.of("project_id", List.of("p1"))),
                "subscription.id");
        assertField(
                client("c-" + UUID.randomUUID()).subscribe("s", nul, Map.of("project_id", List.of("p1"))),
                "subscription.table");
        assertField(
                client("c-" + UUID.randomUUID()).subscribe("s", "notes", Map.of("project_id", List.of(nul))),
                "subscription.scopes");
        SyncTestClient commitId = client("c-" + UUID.randomUUID());
        commitId.state.logEpoch = ok.state.logEpoch;
        commitId.outbox.add(new PushCommit("commit" + nul, List.of(SyncTestClient.deleteOp("notes", "n1"))));
        assertField(commitId, "clientCommitId");
        // an over-long partition from the (development) authentication headers
        HttpFailure f = assertThrows(
                HttpFailure.class,
                () -> new SyncTestClient(
                                SyncScenariosContract.SCHEMA,
                                new HttpTransport("http://localhost:" + port, "p".repeat(600)),
                                "alice",
                                "c-" + UUID.randomUUID())
                        .sync());
        assertEquals(
                "partition",
                assertError(f, 400, "sync.invalid_request")
                        .path("details")
                        .path("field")
                        .asText());
        // the same partition on the blob and segment routes
        String blobId = BlobIds.compute(new byte[] {7});
        given().header("x-actor-id", "alice")
                .header("x-syncular-partition", "p".repeat(600))
                .contentType("application/json")
                .body("{\"byteLength\":1}")
                .post("/blobs/" + blobId + "/upload-grant")
                .then()
                .statusCode(400)
                .body("code", equalTo("sync.invalid_request"))
                .body("details.field", equalTo("partition"));
        given().header("x-actor-id", "alice")
                .header("x-syncular-partition", "p".repeat(600))
                .get("/blobs/" + blobId)
                .then()
                .statusCode(400)
                .body("details.field", equalTo("partition"));
        given().header("x-actor-id", "alice")
                .header("x-syncular-partition", "p".repeat(600))
                .header("X-Syncular-Scopes", "{\"project_id\":[\"p1\"]}")
                .get("/segments/" + blobId)
                .then()
                .statusCode(400)
                .body("details.field", equalTo("partition"));
        // none of it reached the database: the server is fine
        ok.syncUntilIdle();
    }

    private static void assertField(SyncTestClient c, String field) throws IOException {
        HttpFailure f = assertThrows(HttpFailure.class, c::sync);
        JsonNode n = assertError(f, 400, "sync.invalid_request");
        assertEquals(field, n.path("details").path("field").asText(), f.body);
        assertTrue(
                !n.path("message").asText().contains("\u0000") && !f.body.contains("xxxxxxxxxxxxxxxxxxxx"),
                "the value is never echoed: " + f.body);
    }

    /**
     * §1.7 commit-level: a push operation whose row id or values the storage cannot hold (U+0000 in the id or a
     * text value, a 100 KB row id or scope value) rejects only its commit with {@code sync.invalid_request}; the
     * next commit of the same request applies.
     */
    @Test
    void unstorableOperationRejectsOnlyItsCommit() {
        SyncTestClient c =
                client("c-" + UUID.randomUUID()).subscribe("s", "notes", Map.of("project_id", List.of("p1")));
        c.syncUntilIdle();
        String big = "x".repeat(100_000);
        List<String> rejected = new ArrayList<>();
        rejected.add(c.upsert("notes", note("n\u0000id", "p1", "title"), null));
        rejected.add(c.upsert("notes", note("n-title", "p1", "ti\u0000tle"), null));
        rejected.add(c.upsert("notes", note(big, "p1", "title"), null));
        rejected.add(c.upsert("notes", note("n-scope", big, "title"), null));
        rejected.add(c.commit(List.of(new PushOperation("notes", "d\u0000", Op.DELETE, null, null))));
        String applied = c.upsert("notes", note("n-ok", "p1", "fine"), null);
        c.sync();
        for (String id : rejected) {
            PushResult r = c.result(id);
            assertEquals(CommitStatus.REJECTED, r.status(), id);
            OpResult.Error e = assertInstanceOf(OpResult.Error.class, SyncTestClient.firstResult(r));
            assertEquals("sync.invalid_request", e.code());
        }
        assertEquals(CommitStatus.APPLIED, c.result(applied).status());
        c.syncUntilIdle();
        assertEquals(List.of("n-ok"), new ArrayList<>(c.table("notes").keySet()));
    }

    /**
     * Issue 45: a value over {@code syncular.limits.max-value-bytes} (1 MiB) rejects its commit at push time with
     * {@code sync.constraint_violation}, the column in the §6.3.1 details; a value of exactly the cap is applied, and
     * so is the same client's next commit.
     */
    @Test
    void aValueOverTheCapRejectsItsCommitNamingTheColumn() {
        SyncTestClient c =
                client("c-" + UUID.randomUUID()).subscribe("s", "notes", Map.of("project_id", List.of("p1")));
        c.syncUntilIdle();
        Map<String, Object> over = note("n-over", "p1", "over");
        over.put("body", "x".repeat(1024 * 1024 + 1));
        String rejected = c.upsert("notes", over, null);
        c.sync();
        PushResult r = c.result(rejected);
        assertEquals(CommitStatus.REJECTED, r.status());
        OpResult.Error e = assertInstanceOf(OpResult.Error.class, SyncTestClient.firstResult(r));
        assertEquals("sync.constraint_violation", e.code());
        PushResultDetails details = c.lastResponse.frames().stream()
                .filter(f ->
                        f instanceof PushResultDetails d && d.clientCommitId().equals(rejected))
                .map(f -> (PushResultDetails) f)
                .findFirst()
                .orElseThrow();
        assertEquals(
                "{\"fieldPaths\":[\"body\"],\"reason\":\"value_too_large\",\"references\":{\"bytes\":\"1048577\","
                        + "\"limit\":\"1048576\",\"table\":\"notes\"}}",
                details.entries().get(0).detailsJson());
        Map<String, Object> at = note("n-at", "p1", "at the cap");
        at.put("body", "x".repeat(1024 * 1024));
        String applied = c.upsert("notes", at, null);
        c.sync();
        assertEquals(CommitStatus.APPLIED, c.result(applied).status());
        c.syncUntilIdle();
        assertEquals(List.of("n-at"), new ArrayList<>(c.table("notes").keySet()));
    }

    /** §4.7: a resume token whose row cursor holds U+0000 is unusable — the bootstrap restarts, no error. */
    @Test
    void resumeTokenWithNulRestartsTheBootstrap() {
        SyncTestClient writer =
                client("w-" + UUID.randomUUID()).subscribe("s", "notes", Map.of("project_id", List.of("p1")));
        writer.syncUntilIdle();
        writer.upsert("notes", note("n1", "p1", "one"), null);
        writer.syncUntilIdle();
        SyncTestClient c =
                client("c-" + UUID.randomUUID()).subscribe("s", "notes", Map.of("project_id", List.of("p1")));
        c.sync();
        c.subscriptions.get("s").cursor = 0;
        c.subscriptions.get("s").bootstrapState =
                "{\"asOfCommitSeq\":0,\"tables\":[\"notes\"],\"tableIndex\":0,\"rowCursor\":\"a\\u0000b\"}";
        Message m = c.sync();
        assertTrue(((SubStart) m.frames().stream()
                        .filter(f -> f instanceof SubStart)
                        .findFirst()
                        .orElseThrow())
                .bootstrap());
        assertEquals(List.of("n1"), new ArrayList<>(c.table("notes").keySet()));
    }

    /** §5.5: a segment id that is no content address — U+0000 in it — is 404, not a database error. */
    @Test
    void segmentIdWithNulIs404() {
        given().urlEncodingEnabled(false)
                .header("x-actor-id", "alice")
                .header("X-Syncular-Scopes", "{\"project_id\":[\"p1\"]}")
                .get("/segments/sha256:%00" + "0".repeat(63))
                .then()
                .statusCode(404)
                .body("code", equalTo("sync.not_found"));
        given().urlEncodingEnabled(false)
                .header("x-actor-id", "alice")
                .header("X-Syncular-Scopes", "{\"project_id\":[\"p1\"]}")
                .get("/segments/not-an-id")
                .then()
                .statusCode(404)
                .body("code", equalTo("sync.not_found"));
    }

    /** §8.1: the realtime upgrade's {@code clientId} reaches storage like a sync request's: U+0000 is 400. */
    @Test
    void realtimeClientIdWithNulIs400() {
        given().urlEncodingEnabled(false)
                .header("Upgrade", "websocket")
                .header("Connection", "Upgrade")
                .header("x-actor-id", "alice")
                .get("/realtime?clientId=a%00b")
                .then()
                .statusCode(400)
                .body("code", equalTo("sync.invalid_request"))
                .body("message", equalTo("identifier holds U+0000 or exceeds the length limit"));
    }

    // ------------------------------------------------------------------------------------ admin API

    private static ValidatableResponse admin(String path, String json) {
        return given().header("Authorization", "Bearer " + TOKEN)
                .contentType("application/json")
                .body(json)
                .post("/admin/checkpoints" + path)
                .then();
    }

    /** Admin identifiers must be storable and numbers in range: 400, never a wrapped value or a 500. */
    @Test
    void adminFieldsAreValidated() {
        String p = "\"partition\":\"" + partition + "\"";
        for (String body : List.of(
                "{\"partition\":\"a\\u0000b\",\"name\":\"fill\",\"schemaVersion\":1}",
                "{" + p + ",\"name\":\"fi\\u0000ll\",\"schemaVersion\":1}",
                "{" + p + ",\"name\":\"" + "n".repeat(100_000 / 2) + "\",\"schemaVersion\":1}",
                "{" + p + ",\"name\":\"fill\",\"schemaVersion\":99999999999}",
                "{" + p + ",\"name\":\"fill\",\"schemaVersion\":0}",
                "{" + p + ",\"name\":\"fill\",\"schemaVersion\":1.5}")) {
            admin("/declare", body).statusCode(400).body("code", equalTo("sync.invalid_request"));
        }
        for (String numbers : List.of(
                "\"ownerEpoch\":1,\"watermark\":1e19,\"observedRows\":0",
                "\"ownerEpoch\":1,\"watermark\":10000000000000000000,\"observedRows\":0",
                "\"ownerEpoch\":1,\"watermark\":9007199254740992,\"observedRows\":0",
                "\"ownerEpoch\":-1,\"watermark\":0,\"observedRows\":0",
                "\"ownerEpoch\":1,\"watermark\":0,\"observedRows\":\"7\"")) {
            admin("/advance", "{" + p + ",\"name\":\"fill\"," + numbers + "}")
                    .statusCode(400)
                    .body("code", equalTo("sync.invalid_request"));
        }
        admin("/activate", "{" + p + ",\"name\":\"fill\",\"ownerEpoch\":1,\"watermark\":0,\"sourceTables\":[1]}")
                .statusCode(400)
                .body("code", equalTo("sync.invalid_request"));
        admin(
                        "/activate",
                        "{" + p
                                + ",\"name\":\"fill\",\"ownerEpoch\":1,\"watermark\":0,\"sourceTables\":[\"no\\u0000tes\"]}")
                .statusCode(400)
                .body("code", equalTo("sync.invalid_request"));
        admin("/declare", "not json").statusCode(400).body("code", equalTo("sync.invalid_request"));
        // identifiers in admin paths and queries never reach a statement either
        for (String path : List.of(
                "/admin/partitions/a%00b",
                "/admin/partitions/a%00b/clients",
                "/admin/partitions/" + partition + "/tables/notes/rows/a%00b",
                "/admin/partitions?after=a%00b")) {
            given().urlEncodingEnabled(false)
                    .header("Authorization", "Bearer " + TOKEN)
                    .get(path)
                    .then()
                    .statusCode(400)
                    .body("code", equalTo("sync.invalid_request"));
        }
        // nothing was stored
        given().header("Authorization", "Bearer " + TOKEN)
                .get("/admin/checkpoints?partition=" + partition)
                .then()
                .statusCode(200)
                .body("size()", equalTo(0));
    }

    /** Activating on a partition that never synced has no registry row to lock: 404 with the reason, not a 500. */
    @Test
    void activateOnANeverSyncedPartitionIs404() {
        admin(
                        "/activate",
                        "{\"partition\":\"" + partition + "\",\"name\":\"fill\",\"ownerEpoch\":1,\"watermark\":0,"
                                + "\"sourceTables\":[\"notes\"]}")
                .statusCode(404)
                .body("code", equalTo("sync.not_found"))
                .body("details.reason", equalTo("sync.storage.unknown_partition"));
    }

    // ------------------------------------------------------------------------------------ subscriptions

    /** 10,000 SUBSCRIPTION frames are refused as a whole (400) before any storage work; the cap itself is served. */
    @Test
    void tenThousandSubscriptionsAre400AndTheCapIsServed() throws IOException {
        SyncTestClient many = client("c-" + UUID.randomUUID());
        for (int i = 0; i < 10_000; i++) {
            many.subscribe("s" + i, "notes", Map.of("project_id", List.of("p" + i)));
        }
        HttpFailure f = assertThrows(HttpFailure.class, many::sync);
        JsonNode n = assertError(f, 400, "sync.invalid_request");
        assertEquals(10_000, n.path("details").path("subscriptions").asInt());
        assertEquals(256, n.path("details").path("limit").asInt());

        SyncTestClient cap = client("c-" + UUID.randomUUID());
        for (int i = 0; i < 256; i++) {
            cap.subscribe("s" + i, i % 2 == 0 ? "notes" : "comments", Map.of("project_id", List.of("p" + i)));
        }
        cap.sync();
        Message m = cap.sync();
        assertEquals(256, m.frames().stream().filter(x -> x instanceof SubStart).count());
        assertEquals(256, m.frames().stream().filter(x -> x instanceof SubEnd).count());
    }

    // ------------------------------------------------------------------------------------ response budget

    /**
     * §1.4: the round's response budget (64 KiB here). A bootstrap stops after the page that spends it and hands
     * back its resume token; later subscriptions end early without data — a bootstrap with its token, an
     * incremental one with its cursor echoed, and an incremental window is cut between commits. Rounds converge.
     */
    @Test
    void responseBudgetEndsSubscriptionsEarlyAndRoundsConverge() {
        SyncTestClient writer =
                client("w-" + UUID.randomUUID()).subscribe("w", "notes", Map.of("project_id", List.of("p9")));
        writer.syncUntilIdle();
        List<PushOperation> ops = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            Map<String, Object> n = note(String.format("n%03d", i), "p1", "title " + i);
            n.put("body", "b".repeat(1000));
            ops.add(writer.upsertOp("notes", n, null));
        }
        writer.commit(ops);
        writer.syncUntilIdle();

        SyncTestClient c = client("c-" + UUID.randomUUID());
        c.limitSnapshotRows = 20;
        c.maxSnapshotPages = 50;
        c.subscribe("first", "notes", Map.of("project_id", List.of("p1")))
                .subscribe("second", "comments", Map.of("project_id", List.of("p1")))
                .subscribe("third", "notes", Map.of("project_id", List.of("p1")));
        c.sync(); // the log epoch
        Message m = c.sync();
        List<List<Frame>> sections = sections(m);
        long pages = sections.get(0).stream()
                .filter(f -> f instanceof SegmentInline || f instanceof SegmentRef)
                .count();
        assertTrue(pages >= 1 && pages < 10, "the first bootstrap stops at the budget: " + pages + " pages");
        assertNotNull(((SubEnd) last(sections.get(0))).bootstrapState());
        for (List<Frame> deferred : sections.subList(1, 3)) {
            assertEquals(2, deferred.size(), "ended early without data: " + deferred);
            assertTrue(!((SubStart) deferred.get(0)).bootstrap());
            assertNotNull(((SubEnd) deferred.get(1)).bootstrapState(), "the bootstrap keeps going next round");
        }
        c.syncUntilIdle();
        assertEquals(200, c.table("notes").size());

        // incremental: 60 commits of ~2 KB rows; the first window is cut between commits, the other one waits
        String lastCommit = null;
        for (int i = 0; i < 60; i++) {
            Map<String, Object> n = note(String.format("n%03d", i), "p1", "again " + i);
            n.put("body", "c".repeat(2000));
            lastCommit = writer.upsert("notes", n, null);
        }
        writer.syncUntilIdle();
        long latest = writer.result(lastCommit).commitSeq();
        long thirdCursor = c.subscriptions.get("third").cursor;
        m = c.sync();
        sections = sections(m);
        long commits =
                sections.get(0).stream().filter(f -> f instanceof CommitFrame).count();
        assertTrue(commits >= 1 && commits < 60, "the window is cut at the budget: " + commits);
        assertTrue(((SubEnd) last(sections.get(0))).nextCursor() < latest);
        assertEquals(2, sections.get(2).size(), "the later subscription ended early: " + sections.get(2));
        assertEquals(thirdCursor, ((SubEnd) sections.get(2).get(1)).nextCursor());
        assertNull(((SubEnd) sections.get(2).get(1)).bootstrapState());
        c.syncUntilIdle();
        assertEquals("c".repeat(2000), c.table("notes").get("n059").values()[3]);
    }

    /**
     * Issue 44 (response memory) and 45 (huge rows): a snapshot page is read up to the bytes left in the round's
     * response budget (§1.4: the page that spends it is the last), not to its row count: ten 30 KB rows in a
     * 64 KiB budget make a page of three, where the whole 300 KB page used to be read, encoded and sent at once.
     */
    @Test
    void aBootstrapPageIsBoundedByTheBytesLeftInTheBudget() {
        SyncTestClient writer =
                client("w-" + UUID.randomUUID()).subscribe("w", "notes", Map.of("project_id", List.of("p9")));
        writer.syncUntilIdle();
        String project = "big-" + UUID.randomUUID().toString().substring(0, 8);
        List<PushOperation> ops = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            Map<String, Object> n = note(String.format("b%02d", i), project, "big " + i);
            n.put("body", Character.toString('a' + i).repeat(30_000));
            ops.add(writer.upsertOp("notes", n, null));
        }
        writer.commit(ops);
        writer.syncUntilIdle();

        SyncTestClient c = client("c-" + UUID.randomUUID());
        c.limitSnapshotRows = 100;
        c.maxSnapshotPages = 50;
        c.subscribe("big", "notes", Map.of("project_id", List.of(project)));
        c.sync(); // the log epoch
        List<List<Frame>> sections = sections(c.sync());
        List<Frame> pages = sections.get(0).stream()
                .filter(f -> f instanceof SegmentInline || f instanceof SegmentRef)
                .toList();
        assertEquals(1, pages.size(), "one page spends the budget: " + sections.get(0));
        assertEquals(3, c.table("notes").size(), "the page ends with the row that reaches 64 KiB");
        assertNotNull(((SubEnd) last(sections.get(0))).bootstrapState(), "the bootstrap resumes next round");
        c.syncUntilIdle();
        assertEquals(10, c.table("notes").size());
        for (int i = 0; i < 10; i++) {
            assertEquals(
                    Character.toString('a' + i).repeat(30_000),
                    c.table("notes").get(String.format("b%02d", i)).values()[3]);
        }
    }

    // ------------------------------------------------------------------------------------ subscription multiplication

    /**
     * Issue 45, no amplification: a round naming one (table, effective scopes) in 16 subscriptions reads, encodes
     * and delivers each snapshot page once and each log window once; every section still receives all of it, and
     * a subscription of other scopes in the same round is served on its own.
     */
    @Test
    void repeatedSubscriptionsShareOneSnapshotPerTableAndScopes() {
        SyncTestClient writer =
                client("w-" + UUID.randomUUID()).subscribe("w", "notes", Map.of("project_id", List.of("p9")));
        writer.syncUntilIdle();
        List<PushOperation> ops = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            ops.add(writer.upsertOp("notes", note(String.format("n%03d", i), "p1", "t" + i), null));
        }
        ops.add(writer.upsertOp("notes", note("other", "p2", "elsewhere"), null));
        writer.commit(ops);
        writer.syncUntilIdle();

        SyncTestClient c = client("c-" + UUID.randomUUID());
        c.limitSnapshotRows = 5;
        c.maxSnapshotPages = 50;
        for (int i = 0; i < 16; i++) {
            c.subscribe(String.format("s%02d", i), "notes", Map.of("project_id", List.of("p1")));
        }
        c.subscribe("elsewhere", "notes", Map.of("project_id", List.of("p2")));
        c.sync(); // the log epoch
        PrometheusScrape before = PrometheusScrape.scrape();
        List<List<Frame>> sections = sections(c.sync());
        assertEquals(17, sections.size());
        List<Frame> first = sections.get(0);
        assertEquals(6, first.size(), "SUB_START, 4 pages of 5 rows and SUB_END: " + first);
        for (List<Frame> section : sections.subList(1, 16)) {
            assertEquals(first.size(), section.size());
            for (int f = 1; f < first.size() - 1; f++) {
                assertTrue(
                        java.util.Arrays.equals(
                                ((SegmentInline) first.get(f)).payload(), ((SegmentInline) section.get(f)).payload()),
                        "page " + f + " is the same snapshot page");
            }
            assertEquals(((SubEnd) last(first)).nextCursor(), ((SubEnd) last(section)).nextCursor());
        }
        assertEquals(3, sections.get(16).size(), "the other scopes' one page: " + sections.get(16));
        // 15 sections took the 4 pages the first one read
        awaitSharedReads(before, 60);

        for (int i = 20; i < 23; i++) {
            writer.upsert("notes", note(String.format("n%03d", i), "p1", "t" + i), null);
        }
        writer.syncUntilIdle();
        before = PrometheusScrape.scrape();
        sections = sections(c.sync());
        for (List<Frame> section : sections.subList(0, 16)) {
            assertEquals(
                    3, section.stream().filter(f -> f instanceof CommitFrame).count(), "every section: " + section);
        }
        awaitSharedReads(before, 15); // one log window read, 15 sections took it
        c.syncUntilIdle();
        assertEquals(24, c.table("notes").size());
    }

    /** The shared-reads counter moves by exactly {@code reads} (it is told when the response is released). */
    private static void awaitSharedReads(PrometheusScrape before, long reads) {
        String name = "syncular_pull_shared_reads_total";
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
        long moved;
        do {
            moved = Math.round(PrometheusScrape.scrape().value(name, Map.of()) - before.value(name, Map.of()));
        } while (moved < reads && System.nanoTime() < deadline);
        assertEquals(reads, moved);
    }

    private static List<List<Frame>> sections(Message m) {
        List<List<Frame>> out = new ArrayList<>();
        List<Frame> current = null;
        for (Frame f : m.frames()) {
            if (f instanceof SubStart) {
                current = new ArrayList<>();
                out.add(current);
            }
            if (current != null) {
                current.add(f);
            }
        }
        return out;
    }

    private static Frame last(List<Frame> section) {
        return section.get(section.size() - 1);
    }
}
