package dev.syncular.server.http;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.blobs.BlobIds;
import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import dev.syncular.server.sync.SyncScenariosContract;
import dev.syncular.server.testsupport.BlobHttp;
import dev.syncular.server.testsupport.GrantTable;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.PrometheusScrape;
import dev.syncular.server.testsupport.ScenarioAppProfile;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.CommitStatus;
import dev.syncular.server.wire.OpResult;
import dev.syncular.server.wire.PushResult;
import dev.syncular.server.wire.SubStart;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import java.util.zip.GZIPOutputStream;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Appendix B scenario 13 (blobs / file attachments), server side, over real HTTP through the running Quarkus app
 * with the embedded (PostgreSQL) blob store: cases (a)–(e), (i) and (j), each its own test, plus the upload checks
 * (content address, size cap). (f)–(h) need presigned URLs from an object store: {@code S3BlobScenariosTest}.
 */
@QuarkusTest
@TestProfile(ScenarioAppProfile.class)
class HttpBlobScenariosTest {
    static final int MAX_BYTES = ScenarioAppProfile.BLOB_MAX_BYTES;
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final ObjectMapper JSON = new ObjectMapper();

    @Inject
    GrantTable grants;

    @Inject
    PostgresSyncStorage storage;

    @Inject
    Pool pool;

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    private String partition;
    private BlobHttp blobs;

    @BeforeEach
    void freshPartition() {
        partition = "p-" + UUID.randomUUID();
        blobs = new BlobHttp("http://localhost:" + port, partition);
        grants.grant(partition, "alice", Map.of("project_id", List.of("p1")));
        grants.grant(partition, "bob", Map.of("project_id", List.of("p1", "p3")));
        grants.grant(partition, "carol", Map.of("project_id", List.of("p2")));
        grants.grant(partition, "root", Map.of("project_id", List.of("*")));
    }

    static byte[] randomBytes(int n) {
        byte[] b = new byte[n];
        new Random(UUID.randomUUID().getLeastSignificantBits()).nextBytes(b);
        return b;
    }

    static JsonNode json(HttpResponse<byte[]> r) {
        try {
            return JSON.readTree(r.body());
        } catch (IOException e) {
            throw new AssertionError(BlobHttp.text(r), e);
        }
    }

    /** A §10.1 error answer with the given status and code. */
    static JsonNode assertError(HttpResponse<byte[]> r, int status, String code) {
        assertEquals(status, r.statusCode(), BlobHttp.text(r));
        assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("application/json"));
        JsonNode n = json(r);
        assertEquals(code, n.path("code").asText(), BlobHttp.text(r));
        assertTrue(n.has("category") && n.has("retryable") && n.has("recommendedAction") && n.has("message"));
        return n;
    }

    SyncTestClient client(String actor, String project) {
        return new SyncTestClient(
                        SyncScenariosContract.SCHEMA,
                        new HttpTransport("http://localhost:" + port, partition),
                        actor,
                        actor + "-" + UUID.randomUUID())
                .subscribe("att", "attachments", Map.of("project_id", List.of(project)));
    }

    static String ref(String blobId, int length) {
        return "{\"blobId\":\"" + blobId + "\",\"byteLength\":" + length
                + ",\"mediaType\":\"image/png\",\"name\":\"cat.png\"}";
    }

    static Map<String, Object> attachment(String id, String project, String blobRef) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", id);
        m.put("project_id", project);
        m.put("caption", "caption " + id);
        m.put("file", blobRef);
        return m;
    }

    Map<String, Long> tableCounts() {
        String schema = storage.pgSchema();
        Map<String, Long> counts = new TreeMap<>();
        for (Row r : pool.preparedQuery(
                        "SELECT table_name::text FROM information_schema.tables WHERE table_schema = $1")
                .execute(Tuple.of(schema))
                .await()
                .atMost(WAIT)) {
            String n = r.getString(0);
            counts.put(
                    n,
                    pool.query("SELECT count(*) FROM \"" + schema + "\".\"" + n + "\"")
                            .execute()
                            .await()
                            .atMost(WAIT)
                            .iterator()
                            .next()
                            .getLong(0));
        }
        return counts;
    }

    static boolean contains(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }

    /**
     * Appendix B.13 (a): upload (content address verified) → reference → push → pull → fetch on demand by another
     * client of the scope, identical bytes; the blob never rides the pull stream (§5.9.3, §5.9.5, §5.9.7). Once no
     * row references it, it is no longer downloadable.
     */
    @Test
    void B13a_uploadReferencePushPullFetch() {
        byte[] bytes = randomBytes(20_000);
        String id = BlobIds.compute(bytes);
        HttpResponse<byte[]> put = BlobHttp.send(blobs.request("alice", id)
                .header("Content-Type", "image/png")
                .PUT(HttpRequest.BodyPublishers.ofByteArray(bytes))
                .build());
        assertEquals(200, put.statusCode(), BlobHttp.text(put));
        assertEquals(0, put.body().length);

        SyncTestClient a = client("alice", "p1");
        a.syncUntilIdle();
        String commit = a.upsert("attachments", attachment("att-1", "p1", ref(id, bytes.length)), null);
        a.syncUntilIdle();
        assertEquals(CommitStatus.APPLIED, a.result(commit).status());

        SyncTestClient b = client("bob", "p1");
        b.syncUntilIdle();
        Object[] row = b.table("attachments").get("att-1").values();
        assertEquals(ref(id, bytes.length), row[3], "the BlobRef arrives verbatim");
        assertFalse(contains(b.lastResponse.encode(), Arrays.copyOf(bytes, 64)), "no blob bytes in the pull");

        HttpResponse<byte[]> got = blobs.get("bob", id);
        assertEquals(200, got.statusCode(), BlobHttp.text(got));
        assertArrayEquals(bytes, got.body());
        assertEquals(id, BlobIds.compute(got.body()), "the consumer's content-address check passes");
        assertEquals("image/png", got.headers().firstValue("Content-Type").orElseThrow());
        assertEquals(200, blobs.get("root", id).statusCode(), "'*' passes");

        // the row goes: no row references the blob any more, so it is no longer downloadable
        String del = a.delete("attachments", "att-1");
        a.syncUntilIdle();
        assertEquals(CommitStatus.APPLIED, a.result(del).status());
        assertError(blobs.get("bob", id), 403, "blob.forbidden");
        assertError(
                BlobHttp.send(blobs.request("bob", id)
                        .header("If-None-Match", "\"" + id + "\"")
                        .GET()
                        .build()),
                403,
                "blob.forbidden");
    }

    /** Uploads {@code bytes} as alice and pushes attachment {@code rowId} of p1 referencing them; yields the id. */
    private String referenced(String rowId, byte[] bytes) {
        String id = BlobIds.compute(bytes);
        assertEquals(200, blobs.put("alice", id, bytes).statusCode());
        SyncTestClient a = client("alice", "p1");
        a.syncUntilIdle();
        String commit = a.upsert("attachments", attachment(rowId, "p1", ref(id, bytes.length)), null);
        a.syncUntilIdle();
        assertEquals(CommitStatus.APPLIED, a.result(commit).status());
        return id;
    }

    /**
     * Appendix B.13 (d): the purge of the blob-cache references is the client's (§3.3, B2). The server side it
     * relies on: once A's scope is revoked, A's download of a blob only rows of that scope reference is
     * {@code blob.forbidden} — revocation ends the access a cached body stood for — while an actor still holding the
     * scope keeps it (the blob is not deleted; evicted ≠ revoked).
     */
    @Test
    void B13d_revocationEndsTheDownloadOfTheRevokedScopesBlobs() {
        byte[] bytes = randomBytes(3000);
        String id = referenced("att-d", bytes);
        assertEquals(200, blobs.get("alice", id).statusCode());
        SyncTestClient a = client("alice", "p1");
        a.syncUntilIdle();
        assertEquals(1, a.table("attachments").size());
        grants.grant(partition, "alice", Map.of("project_id", List.of("p3")));
        a.sync();
        assertTrue(a.table("attachments").isEmpty(), "the client purged the scope's rows (§3.3)");
        assertEquals(
                "sync.scope_revoked",
                a.lastResponse.frames().stream()
                        .filter(f -> f instanceof SubStart)
                        .map(f -> ((SubStart) f).reasonCode())
                        .findFirst()
                        .orElseThrow());
        assertError(blobs.get("alice", id), 403, "blob.forbidden");
        HttpResponse<byte[]> bob = blobs.get("bob", id);
        assertEquals(200, bob.statusCode());
        assertArrayEquals(bytes, bob.body());
    }

    /**
     * Appendix B.13 (e): the download counter and the cache hit are the client's (B1). The server side it relies on:
     * the response names its bytes by content address ({@code ETag: "<blobId>"}) with the §5.9.5 headers, and a
     * revalidation with that ETag answers 304 with no body; another ETag gets the bytes.
     */
    @Test
    void B13e_theContentAddressIsTheCacheKey() {
        byte[] bytes = randomBytes(2000);
        String id = referenced("att-e", bytes);
        HttpResponse<byte[]> got = blobs.get("bob", id);
        assertEquals(200, got.statusCode(), BlobHttp.text(got));
        assertArrayEquals(bytes, got.body());
        assertEquals("\"" + id + "\"", got.headers().firstValue("ETag").orElseThrow());
        assertEquals(
                "private, max-age=0", got.headers().firstValue("Cache-Control").orElseThrow());
        assertEquals(
                "Authorization, Accept-Encoding",
                got.headers().firstValue("Vary").orElseThrow());
        assertEquals(
                "nosniff", got.headers().firstValue("X-Content-Type-Options").orElseThrow());
        HttpResponse<byte[]> cached = BlobHttp.send(blobs.request("bob", id)
                .header("If-None-Match", "\"" + id + "\"")
                .GET()
                .build());
        assertEquals(304, cached.statusCode());
        assertEquals(0, cached.body().length);
        assertEquals(
                200,
                BlobHttp.send(blobs.request("bob", id)
                                .header("If-None-Match", "\"sha256:other\"")
                                .GET()
                                .build())
                        .statusCode());
    }

    /**
     * Appendix B.13 (i): the cache surviving a client restart is the client's (B1 storage model). The server side it
     * relies on: a blob id names immutable bytes — after further writes to the referencing row, a later download is
     * byte-identical with the same ETag, and a revalidation of the body cached before still answers 304.
     */
    @Test
    void B13i_aBlobIdNamesTheSameBytesForever() {
        byte[] bytes = randomBytes(4000);
        String id = referenced("att-i", bytes);
        HttpResponse<byte[]> before = blobs.get("alice", id);
        SyncTestClient a = client("alice", "p1");
        a.syncUntilIdle();
        Map<String, Object> edit = new LinkedHashMap<>();
        edit.put("id", "att-i");
        edit.put("caption", "edited later");
        a.upsert("attachments", edit, null);
        a.syncUntilIdle();
        assertEquals(200, blobs.put("alice", id, bytes).statusCode(), "a repeated upload changes nothing");
        HttpResponse<byte[]> after = blobs.get("alice", id);
        assertArrayEquals(before.body(), after.body());
        assertEquals(before.headers().firstValue("ETag"), after.headers().firstValue("ETag"));
        assertEquals(
                304,
                BlobHttp.send(blobs.request("alice", id)
                                .header(
                                        "If-None-Match",
                                        before.headers().firstValue("ETag").orElseThrow())
                                .GET()
                                .build())
                        .statusCode());
    }

    /**
     * Appendix B.13 (j): cap eviction and its retention of referenced and upload-pinned bodies are the client's (B1,
     * B4). The server side it relies on: an evicted body stays resolvable from its BlobRef (B3) — the referenced
     * blob downloads again — and staging the same bytes again uploads idempotently, so a pinned body that must be
     * re-sent is accepted once more without a second stored copy.
     */
    @Test
    void B13j_evictedBodiesStayResolvableAndReUploadsAreIdempotent() {
        byte[] bytes = randomBytes(5000);
        String id = referenced("att-j", bytes);
        Map<String, Long> before = tableCounts();
        for (int i = 0; i < 3; i++) {
            assertEquals(200, blobs.put("alice", id, bytes).statusCode());
            HttpResponse<byte[]> again = blobs.get("alice", id);
            assertEquals(200, again.statusCode());
            assertArrayEquals(bytes, again.body());
        }
        assertEquals(before.get("sync_blobs"), tableCounts().get("sync_blobs"), "one stored body");
    }

    /** Blob bytes through this server are counted by direction; a 304 revalidation moves nothing. */
    @Test
    void blobBytesInAndOutAreCounted() {
        byte[] bytes = randomBytes(12_345);
        String id = BlobIds.compute(bytes);
        double in = metric("in");
        double out = metric("out");
        assertEquals(
                200,
                BlobHttp.send(blobs.request("alice", id)
                                .PUT(HttpRequest.BodyPublishers.ofByteArray(bytes))
                                .build())
                        .statusCode());
        assertEquals(bytes.length, Math.round(metric("in") - in));
        SyncTestClient a = client("alice", "p1");
        a.syncUntilIdle();
        a.upsert("attachments", attachment("att-m", "p1", ref(id, bytes.length)), null);
        a.syncUntilIdle();
        assertEquals(200, blobs.get("alice", id).statusCode());
        assertEquals(
                304,
                BlobHttp.send(blobs.request("alice", id)
                                .header("If-None-Match", "\"" + id + "\"")
                                .GET()
                                .build())
                        .statusCode());
        assertEquals(bytes.length, Math.round(metric("out") - out));
    }

    private static double metric(String direction) {
        return PrometheusScrape.scrape().value("syncular_blobs_bytes_total", Map.of("direction", direction));
    }

    /**
     * Appendix B.13 (b): a push referencing a blob never uploaded is rejected {@code blob.not_found} at its operation,
     * the commit rolls back whole and no dangling reference enters the log (§5.9.6, §6.6).
     */
    @Test
    void B13b_missingBlobPushIsRejectedWhole() {
        SyncTestClient a = client("alice", "p1");
        a.syncUntilIdle();
        String missing = BlobIds.compute(randomBytes(100));
        Map<String, Long> before = tableCounts();
        String commit = a.commit(List.of(
                a.upsertOp("attachments", attachment("ok", "p1", null), null),
                a.upsertOp("attachments", attachment("dangling", "p1", ref(missing, 100)), null)));
        a.sync();
        PushResult r = a.result(commit);
        assertEquals(CommitStatus.REJECTED, r.status());
        OpResult.Error e = (OpResult.Error) SyncTestClient.firstResult(r);
        assertEquals("blob.not_found", e.code());
        assertEquals(1, e.opIndex());
        Map<String, Long> after = tableCounts();
        Map<String, Long> expected = new HashMap<>(before);
        expected.put("sync_push_results", before.get("sync_push_results") + 1);
        expected.put("sync_clients", after.get("sync_clients"));
        assertEquals(expected, after, "only the rejected result and the cursor record changed");
        assertTrue(storage.readAllRows(partition, "attachments")
                .await()
                .atMost(WAIT)
                .isEmpty());
        assertTrue(storage.readBlobReferences(partition, missing, null, 10)
                .await()
                .atMost(WAIT)
                .isEmpty());
        assertTrue(a.table("attachments").isEmpty());
    }

    /**
     * Appendix B.13 (c), the cross-scope probe: a blobId learned from a leaked ref is no capability — an actor of
     * another scope is denied {@code blob.forbidden} with its §10.1 shape and {@code details.blobId} (§5.9.5).
     */
    @Test
    void B13c_crossScopeProbeIsDenied() {
        byte[] bytes = randomBytes(1000);
        String id = BlobIds.compute(bytes);
        assertEquals(200, blobs.put("alice", id, bytes).statusCode());
        SyncTestClient a = client("alice", "p1");
        a.syncUntilIdle();
        a.upsert("attachments", attachment("att-1", "p1", ref(id, bytes.length)), null);
        a.syncUntilIdle();

        JsonNode denied = assertError(blobs.get("carol", id), 403, "blob.forbidden");
        assertEquals("forbidden", denied.get("category").asText());
        assertFalse(denied.get("retryable").asBoolean());
        assertEquals(id, denied.path("details").path("blobId").asText());
        assertFalse(denied.get("message").asText().contains(id), "messages are static");
        // an actor whose scope resolution fails is denied the same way
        assertError(blobs.get("mallory", id), 403, "blob.forbidden");
        // the uploader's own blob, referenced by nothing: uploading grants no read
        byte[] orphan = randomBytes(10);
        assertEquals(200, blobs.put("carol", BlobIds.compute(orphan), orphan).statusCode());
        assertError(blobs.get("carol", BlobIds.compute(orphan)), 403, "blob.forbidden");
        // another partition never sees it
        assertError(new BlobHttp("http://localhost:" + port, partition + "-x").get("alice", id), 404, "blob.not_found");

        assertEquals(200, blobs.get("alice", id).statusCode());
        JsonNode unknown = assertError(blobs.get("alice", BlobIds.compute(randomBytes(5))), 404, "blob.not_found");
        assertEquals("not-found", unknown.get("category").asText());
        assertError(blobs.get("alice", "sha256:XYZ"), 400, "sync.invalid_request");
        assertError(blobs.get(null, id), 401, "sync.auth_required");
    }

    @Test
    void uploadsVerifyTheContentAddressAndAreIdempotent() throws IOException {
        byte[] bytes = randomBytes(3000);
        String id = BlobIds.compute(bytes);
        String wrong = BlobIds.compute(randomBytes(3000));
        JsonNode mismatch = assertError(blobs.put("alice", wrong, bytes), 400, "blob.hash_mismatch");
        assertEquals(wrong, mismatch.path("details").path("blobId").asText());
        assertError(blobs.get("root", wrong), 404, "blob.not_found");

        assertEquals(200, blobs.put("alice", id, bytes).statusCode());
        assertEquals(200, blobs.put("bob", id, bytes).statusCode(), "re-upload is an idempotent success");

        // Content-Encoding: gzip — the decoded bytes are hashed
        byte[] other = randomBytes(5000);
        ByteArrayOutputStream gz = new ByteArrayOutputStream();
        try (GZIPOutputStream out = new GZIPOutputStream(gz)) {
            out.write(other);
        }
        HttpResponse<byte[]> gzip = BlobHttp.send(blobs.request("alice", BlobIds.compute(other))
                .header("Content-Encoding", "gzip")
                .PUT(HttpRequest.BodyPublishers.ofByteArray(gz.toByteArray()))
                .build());
        assertEquals(200, gzip.statusCode(), BlobHttp.text(gzip));
        SyncTestClient a = client("alice", "p1");
        a.syncUntilIdle();
        a.upsert("attachments", attachment("g", "p1", ref(BlobIds.compute(other), other.length)), null);
        a.syncUntilIdle();
        HttpResponse<byte[]> back = blobs.get("alice", BlobIds.compute(other));
        assertArrayEquals(other, back.body(), "stored decoded, served verbatim");
        assertEquals(
                "application/octet-stream",
                back.headers().firstValue("Content-Type").orElseThrow());

        assertError(blobs.put("alice", "sha256:" + "A".repeat(64), bytes), 400, "sync.invalid_request");
        assertError(blobs.put(null, id, bytes), 401, "sync.auth_required");
        assertError(
                BlobHttp.send(blobs.request("alice", id)
                        .header("Content-Encoding", "br")
                        .PUT(HttpRequest.BodyPublishers.ofByteArray(bytes))
                        .build()),
                415,
                "sync.invalid_request");
    }

    @Test
    void theSizeCapAppliesToDeclaredAndReceivedBytes() throws IOException {
        byte[] big = randomBytes(MAX_BYTES + 1);
        String id = BlobIds.compute(big);
        JsonNode declared = assertError(blobs.put("alice", id, big), 413, "blob.too_large");
        assertEquals(MAX_BYTES, declared.path("details").path("maxBytes").asLong());
        // no Content-Length (chunked): the streamed count is capped
        HttpResponse<byte[]> chunked = BlobHttp.send(blobs.request("alice", id)
                .PUT(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(big)))
                .build());
        assertError(chunked, 413, "blob.too_large");
        // a small gzip body inflating past the cap
        ByteArrayOutputStream gz = new ByteArrayOutputStream();
        try (GZIPOutputStream out = new GZIPOutputStream(gz)) {
            out.write(new byte[MAX_BYTES * 4]);
        }
        assertTrue(gz.size() < MAX_BYTES);
        assertError(
                BlobHttp.send(blobs.request("alice", BlobIds.compute(new byte[MAX_BYTES * 4]))
                        .header("Content-Encoding", "gzip")
                        .PUT(HttpRequest.BodyPublishers.ofByteArray(gz.toByteArray()))
                        .build()),
                413,
                "blob.too_large");
        assertError(blobs.get("root", id), 404, "blob.not_found");
        // exactly at the cap is fine
        byte[] max = randomBytes(MAX_BYTES);
        assertEquals(200, blobs.put("alice", BlobIds.compute(max), max).statusCode());
        // the grant checks the declared length up front
        assertError(blobs.grant("alice", id, "{\"byteLength\":" + (MAX_BYTES + 1) + "}"), 413, "blob.too_large");
    }

    /**
     * §5.9.5 "a blobId is never a capability", §5.9.6: an actor that knows another scope's blob id cannot
     * reference it (the same blob.not_found as an unknown blob) and so cannot download it; uploading the bytes
     * itself, or seeing a row that references the blob, entitles it.
     */
    @Test
    void aKnownBlobIdGrantsNothing() {
        byte[] bytes = randomBytes(2_000);
        String id = BlobIds.compute(bytes);
        assertEquals(200, blobs.put("carol", id, bytes).statusCode());
        SyncTestClient c = client("carol", "p2");
        c.syncUntilIdle();
        String owned = c.upsert("attachments", attachment("att-p2", "p2", ref(id, bytes.length)), null);
        c.syncUntilIdle();
        assertEquals(CommitStatus.APPLIED, c.result(owned).status(), String.valueOf(c.result(owned)));

        SyncTestClient a = client("alice", "p1");
        a.syncUntilIdle();
        String probe = a.upsert("attachments", attachment("att-steal", "p1", ref(id, bytes.length)), null);
        String unknownId = BlobIds.compute(randomBytes(7));
        String control = a.upsert("attachments", attachment("att-unknown", "p1", ref(unknownId, 7)), null);
        a.syncUntilIdle();
        OpResult.Error refused = assertInstanceOf(OpResult.Error.class, SyncTestClient.firstResult(a.result(probe)));
        OpResult.Error unknown = assertInstanceOf(OpResult.Error.class, SyncTestClient.firstResult(a.result(control)));
        assertEquals("blob.not_found", refused.code());
        assertEquals(unknown.code(), refused.code());
        assertEquals(unknown.message(), refused.message());
        assertEquals(unknown.retryable(), refused.retryable());
        assertFalse(server().containsKey("att-steal"));
        assertError(blobs.get("alice", id), 403, "blob.forbidden");

        // bob sees no p2 row either; once his grant covers p2 the row entitles him (and p1 readers after him)
        SyncTestClient b = client("bob", "p1");
        b.syncUntilIdle();
        String early = b.upsert("attachments", attachment("att-bob-1", "p1", ref(id, bytes.length)), null);
        b.syncUntilIdle();
        assertEquals("blob.not_found", ((OpResult.Error) SyncTestClient.firstResult(b.result(early))).code());
        grants.grant(partition, "bob", Map.of("project_id", List.of("p1", "p2")));
        String shared = b.upsert("attachments", attachment("att-bob-2", "p1", ref(id, bytes.length)), null);
        b.syncUntilIdle();
        assertEquals(CommitStatus.APPLIED, b.result(shared).status(), String.valueOf(b.result(shared)));

        // alice proves possession by uploading the bytes herself: now her reference is hers to make
        assertEquals(200, blobs.put("alice", id, bytes).statusCode());
        String mine = a.upsert("attachments", attachment("att-alice", "p1", ref(id, bytes.length)), null);
        a.syncUntilIdle();
        assertEquals(CommitStatus.APPLIED, a.result(mine).status(), String.valueOf(a.result(mine)));
        assertEquals(200, blobs.get("alice", id).statusCode());
    }

    private Map<String, StoredRow> server() {
        Map<String, StoredRow> out = new TreeMap<>();
        for (StoredRow r : storage.readAllRows(partition, "attachments").await().atMost(WAIT)) {
            out.put(r.rowId(), r);
        }
        return out;
    }

    /** Without a presigning store the grant says so ({}), and the client streams through the direct PUT. */
    @Test
    void uploadGrantWithTheEmbeddedStore() {
        byte[] bytes = randomBytes(700);
        String id = BlobIds.compute(bytes);
        HttpResponse<byte[]> none = blobs.grant("alice", id, "{\"byteLength\":700,\"mediaType\":\"image/png\"}");
        assertEquals(200, none.statusCode(), BlobHttp.text(none));
        assertEquals(0, json(none).size(), "no URL: upload through PUT <mount>/blobs/{id}");
        assertEquals(200, blobs.put("alice", id, bytes).statusCode());
        HttpResponse<byte[]> present = blobs.grant("alice", id, "{\"byteLength\":700}");
        assertEquals(200, present.statusCode());
        assertTrue(json(present).get("present").asBoolean());
        assertFalse(json(present).has("url"));
        // §5.9.6: to an actor not entitled to the stored blob the grant says "upload it yourself", never "present"
        HttpResponse<byte[]> notYours = blobs.grant("bob", id, "{\"byteLength\":700}");
        assertEquals(200, notYours.statusCode());
        assertEquals(0, json(notYours).size(), BlobHttp.text(notYours));

        assertError(blobs.grant("alice", id, "{\"byteLength\":-1}"), 400, "sync.invalid_request");
        assertError(blobs.grant("alice", id, "{\"byteLength\":1.5}"), 400, "sync.invalid_request");
        assertError(blobs.grant("alice", id, "{\"mediaType\":\"x/y\"}"), 400, "sync.invalid_request");
        assertError(blobs.grant("alice", id, "{\"byteLength\":1,\"mediaType\":7}"), 400, "sync.invalid_request");
        assertError(blobs.grant("alice", id, "not json"), 400, "sync.invalid_request");
        assertError(blobs.grant("alice", "sha256:nope", "{\"byteLength\":1}"), 400, "sync.invalid_request");
        assertError(blobs.grant(null, id, "{\"byteLength\":1}"), 401, "sync.auth_required");
    }
}
