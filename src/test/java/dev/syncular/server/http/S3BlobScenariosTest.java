package dev.syncular.server.http;

import static dev.syncular.server.http.HttpBlobScenariosTest.assertError;
import static dev.syncular.server.http.HttpBlobScenariosTest.attachment;
import static dev.syncular.server.http.HttpBlobScenariosTest.json;
import static dev.syncular.server.http.HttpBlobScenariosTest.randomBytes;
import static dev.syncular.server.http.HttpBlobScenariosTest.ref;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.blobs.BlobIds;
import dev.syncular.server.sync.SyncScenariosContract;
import dev.syncular.server.testsupport.BlobHttp;
import dev.syncular.server.testsupport.GrantTable;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.NotesAppProfile;
import dev.syncular.server.testsupport.PrometheusScrape;
import dev.syncular.server.testsupport.StartsProcesses;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestS3;
import dev.syncular.server.wire.CommitStatus;
import dev.syncular.server.wire.OpResult;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;

/**
 * Appendix B scenario 13 (f)–(h), server side, with {@code syncular.blobs.store=s3} against a real
 * S3-compatible server ({@link TestS3}, which verifies SigV4 signatures and presigned-URL expiry): presigned
 * upload grant → direct PUT with no host auth → push (existence via HEAD) → always-issue presigned download;
 * tampered and expired URLs refused by the object store and recovered by re-requesting the authorized route.
 */
@StartsProcesses
@QuarkusTest
@TestProfile(S3BlobScenariosTest.S3Blobs.class)
class S3BlobScenariosTest {
    /** Short enough to wait out in a test, long enough to fetch right after minting. */
    static final int TTL_SECONDS = 4;

    public static class S3Blobs implements QuarkusTestProfile {
        private static final String BUCKET = TestS3.newBucket();

        @Override
        public Map<String, String> getConfigOverrides() {
            Map<String, String> m = new HashMap<>(TestS3.quarkusConfig());
            m.putAll(NotesAppProfile.notesIn("sync_s3blob_"));
            m.put("syncular.blobs.store", "s3");
            m.put("syncular.blobs.max-bytes", "1M");
            m.put("syncular.s3.bucket", BUCKET);
            m.put("syncular.s3.key-prefix", "e2e/");
            m.put("syncular.s3.presign-ttl", TTL_SECONDS + "s");
            return m;
        }

        @Override
        public Set<Class<?>> getEnabledAlternatives() {
            return Set.of(GrantTable.class);
        }
    }

    @Inject
    GrantTable grants;

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    @ConfigProperty(name = "syncular.s3.bucket")
    String bucket;

    private String partition;
    private BlobHttp blobs;

    @BeforeEach
    void freshPartition() {
        partition = "tenant-" + UUID.randomUUID();
        blobs = new BlobHttp("http://localhost:" + port, partition);
        grants.grant(partition, "alice", Map.of("project_id", List.of("p1")));
        grants.grant(partition, "bob", Map.of("project_id", List.of("p1")));
        grants.grant(partition, "carol", Map.of("project_id", List.of("p2")));
    }

    private SyncTestClient client(String actor) {
        return new SyncTestClient(
                        SyncScenariosContract.SCHEMA,
                        new HttpTransport("http://localhost:" + port, partition),
                        actor,
                        actor + "-" + UUID.randomUUID())
                .subscribe("att", "attachments", Map.of("project_id", List.of("p1")));
    }

    /** Pushes a p1 attachment referencing the blob; the push's existence check is a HEAD on the object. */
    private void reference(String blobId, int length) {
        SyncTestClient a = client("alice");
        a.syncUntilIdle();
        String commit =
                a.upsert("attachments", attachment("att-" + UUID.randomUUID(), "p1", ref(blobId, length)), null);
        a.syncUntilIdle();
        assertEquals(CommitStatus.APPLIED, a.result(commit).status(), String.valueOf(a.result(commit)));
    }

    /** {@code {"url","urlExpiresAtMs"}} of an authorized download, checked to be a presigned object-store URL. */
    private JsonNode downloadGrant(String actor, String blobId) {
        long before = System.currentTimeMillis();
        HttpResponse<byte[]> r = blobs.get(actor, blobId);
        assertEquals(200, r.statusCode(), BlobHttp.text(r));
        assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("application/json"));
        assertEquals("no-store", r.headers().firstValue("Cache-Control").orElseThrow());
        JsonNode n = json(r);
        assertEquals(2, n.size(), n.toString());
        String url = n.get("url").asText();
        assertTrue(url.startsWith(TestS3.endpoint() + "/"), "served by the object store, not the sync server: " + url);
        assertTrue(url.contains(BlobIds.hex(blobId)), "the signed key embeds the blob id");
        long expires = n.get("urlExpiresAtMs").asLong();
        assertTrue(expires > before - 1000 && expires <= before + TTL_SECONDS * 1000L + 1000, n.toString());
        return n;
    }

    private static String tamper(String url) {
        String sig = "X-Amz-Signature=";
        int at = url.indexOf(sig) + sig.length();
        return url.substring(0, at) + (url.charAt(at) == '0' ? '1' : '0') + url.substring(at + 1);
    }

    /** Waits, without sleeping the test thread blindly, until {@code condition} holds or the deadline passes. */
    private static void awaitCondition(BooleanSupplier condition, Duration deadline) throws Exception {
        CompletableFuture<Void> done = new CompletableFuture<>();
        ScheduledExecutorService poll = Executors.newSingleThreadScheduledExecutor();
        try {
            poll.scheduleAtFixedRate(
                    () -> {
                        if (condition.getAsBoolean()) {
                            done.complete(null);
                        }
                    },
                    0,
                    50,
                    TimeUnit.MILLISECONDS);
            done.get(deadline.toMillis(), TimeUnit.MILLISECONDS);
        } finally {
            poll.shutdownNow();
        }
    }

    /**
     * Appendix B.13 (h): upload grant → PUT straight to storage with no host auth (bound to the declared length) →
     * push, whose §5.9.6 existence check passes by HEAD → another client fetches the bytes through its presigned
     * download; the grant flow's refusals (another actor, the size cap) around it (§5.9.3).
     */
    @Test
    void B13h_presignedUploadGrantPutReferenceAndFetch() {
        byte[] bytes = randomBytes(50_000);
        String id = BlobIds.compute(bytes);
        HttpResponse<byte[]> g = blobs.grant("alice", id, "{\"byteLength\":50000,\"mediaType\":\"image/png\"}");
        assertEquals(200, g.statusCode(), BlobHttp.text(g));
        JsonNode grant = json(g);
        String putUrl = grant.get("url").asText();
        assertTrue(putUrl.startsWith(TestS3.endpoint() + "/"), putUrl);
        assertTrue(grant.get("urlExpiresAtMs").asLong() > System.currentTimeMillis());

        // the grant is bound to the declared length: refused with a 4xx, or the connection closed under the body
        int wrongLength = BlobHttp.refusedPut(putUrl, Arrays.copyOf(bytes, 50_001));
        assertTrue(
                wrongLength == BlobHttp.CLOSED_BEFORE_ANSWER || (wrongLength >= 400 && wrongLength < 500),
                "status " + wrongLength);
        assertError(blobs.get("alice", id), 404, "blob.not_found");

        HttpResponse<byte[]> put = BlobHttp.putTo(putUrl, bytes);
        assertEquals(200, put.statusCode(), BlobHttp.text(put));
        HttpResponse<byte[]> again = blobs.grant("alice", id, "{\"byteLength\":50000}");
        assertTrue(json(again).get("present").asBoolean(), "an uploaded blob needs no second PUT");
        // §5.9.6: an actor not entitled to the stored object is sent to the verified direct PUT, never presigned
        // a PUT over it nor told it is present
        HttpResponse<byte[]> other = blobs.grant("carol", id, "{\"byteLength\":50000}");
        assertEquals(200, other.statusCode(), BlobHttp.text(other));
        assertEquals(0, json(other).size(), BlobHttp.text(other));

        // before any row references it, nobody may download it (not even the uploader)
        assertError(blobs.get("alice", id), 403, "blob.forbidden");
        reference(id, bytes.length);

        SyncTestClient b = client("bob");
        b.syncUntilIdle();
        assertEquals(1, b.table("attachments").size());
        JsonNode download = downloadGrant("bob", id);
        HttpResponse<byte[]> fetched = BlobHttp.fetch(download.get("url").asText());
        assertEquals(200, fetched.statusCode());
        assertArrayEquals(bytes, fetched.body());
        assertEquals(id, BlobIds.compute(fetched.body()), "content address verified by the consumer");

        // the cross-scope probe mints nothing
        assertError(blobs.get("carol", id), 403, "blob.forbidden");
        assertError(blobs.get("bob", BlobIds.compute(randomBytes(9))), 404, "blob.not_found");
        assertError(
                blobs.grant("alice", BlobIds.compute(randomBytes(9)), "{\"byteLength\":1048577}"),
                413,
                "blob.too_large");
    }

    /**
     * Appendix B.13 (f): with presigned downloads configured, an authorized download answers
     * {@code {url, urlExpiresAtMs}} and no bytes (§5.9.5 always-issue); the bytes come from the object store's URL
     * with no sync-server credentials, content address verified, and none leave this server.
     */
    @Test
    void B13f_presignedDownloadIsServedByTheObjectStore() {
        byte[] bytes = randomBytes(20_000);
        String id = BlobIds.compute(bytes);
        assertEquals(200, blobs.put("alice", id, bytes).statusCode());
        reference(id, bytes.length);
        double out = PrometheusScrape.scrape().value("syncular_blobs_bytes_total", Map.of("direction", "out"));
        JsonNode download = downloadGrant("bob", id);
        HttpResponse<byte[]> fetched = BlobHttp.fetch(download.get("url").asText());
        assertEquals(200, fetched.statusCode());
        assertArrayEquals(bytes, fetched.body());
        assertEquals(id, BlobIds.compute(fetched.body()));
        assertEquals(
                out,
                PrometheusScrape.scrape().value("syncular_blobs_bytes_total", Map.of("direction", "out")),
                "zero bytes through the authorized endpoint");
    }

    /**
     * §5.9.5 "a blobId is never a capability", §5.9.6, on the S3 store: carol's blob, referenced by her p2 row,
     * cannot be referenced by alice (p1) on the strength of its id — the same blob.not_found as an unknown id —
     * so no presigned GET is ever minted for her; a presigned upload grant of her own entitles her.
     */
    @Test
    void aKnownBlobIdIsNoCapability() {
        grants.grant(partition, "carol", Map.of("project_id", List.of("p2")));
        byte[] bytes = randomBytes(3_000);
        String id = BlobIds.compute(bytes);
        assertEquals(200, blobs.put("carol", id, bytes).statusCode());
        SyncTestClient c = new SyncTestClient(
                        SyncScenariosContract.SCHEMA,
                        new HttpTransport("http://localhost:" + port, partition),
                        "carol",
                        "carol-" + UUID.randomUUID())
                .subscribe("att", "attachments", Map.of("project_id", List.of("p2")));
        c.syncUntilIdle();
        String owned = c.upsert("attachments", attachment("att-p2", "p2", ref(id, bytes.length)), null);
        c.syncUntilIdle();
        assertEquals(CommitStatus.APPLIED, c.result(owned).status(), String.valueOf(c.result(owned)));
        downloadGrant("carol", id);

        SyncTestClient a = client("alice");
        a.syncUntilIdle();
        String probe = a.upsert("attachments", attachment("att-steal", "p1", ref(id, bytes.length)), null);
        String control =
                a.upsert("attachments", attachment("att-unknown", "p1", ref(BlobIds.compute(randomBytes(3)), 3)), null);
        a.syncUntilIdle();
        OpResult.Error refused = assertInstanceOf(OpResult.Error.class, SyncTestClient.firstResult(a.result(probe)));
        OpResult.Error unknown = assertInstanceOf(OpResult.Error.class, SyncTestClient.firstResult(a.result(control)));
        assertEquals("blob.not_found", refused.code());
        assertEquals(
                unknown, new OpResult.Error(refused.opIndex(), refused.code(), refused.message(), refused.retryable()));
        assertFalse(a.table("attachments").containsKey("att-steal"));
        assertError(blobs.get("alice", id), 403, "blob.forbidden");
        assertEquals(
                0, json(blobs.grant("alice", id, "{\"byteLength\":3000}")).size(), "no presigned PUT over her object");

        // a fresh blob alice is granted an upload for is hers to reference once the bytes are in the bucket
        byte[] own = randomBytes(1_000);
        String ownId = BlobIds.compute(own);
        String putUrl = json(blobs.grant("alice", ownId, "{\"byteLength\":1000}"))
                .get("url")
                .asText();
        assertEquals(200, BlobHttp.putTo(putUrl, own).statusCode());
        String mine = a.upsert("attachments", attachment("att-own", "p1", ref(ownId, own.length)), null);
        a.syncUntilIdle();
        assertEquals(CommitStatus.APPLIED, a.result(mine).status(), String.valueOf(a.result(mine)));
        assertArrayEquals(
                own,
                BlobHttp.fetch(downloadGrant("bob", ownId).get("url").asText()).body());
    }

    /** The direct PUT stays available with the S3 store: the server writes the object with its upload metadata. */
    @Test
    void directUploadThroughTheServerLandsInTheBucket() {
        byte[] bytes = randomBytes(1234);
        String id = BlobIds.compute(bytes);
        assertError(blobs.put("alice", BlobIds.compute(randomBytes(1234)), bytes), 400, "blob.hash_mismatch");
        long before = System.currentTimeMillis();
        HttpResponse<byte[]> put = BlobHttp.send(blobs.request("alice", id)
                .header("Content-Type", "text/csv")
                .PUT(HttpRequest.BodyPublishers.ofByteArray(bytes))
                .build());
        assertEquals(200, put.statusCode(), BlobHttp.text(put));
        assertEquals(200, blobs.put("bob", id, bytes).statusCode(), "idempotent");
        String key = "e2e/blob/" + partition + "/sha256/" + BlobIds.hex(id);
        try (S3Client s3 = TestS3.client()) {
            HeadObjectResponse head = s3.headObject(h -> h.bucket(bucket).key(key));
            assertEquals(1234L, head.contentLength());
            JsonNode meta;
            try {
                meta = new ObjectMapper()
                        .readTree(Base64.getUrlDecoder().decode(head.metadata().get("syncular-blob")));
            } catch (IOException e) {
                throw new AssertionError(e);
            }
            assertEquals(1234, meta.get("byteLength").asInt());
            assertEquals("text/csv", meta.get("mediaType").asText());
            assertTrue(meta.get("createdAtMs").asLong() >= before);
        }
        reference(id, bytes.length);
        assertArrayEquals(
                bytes,
                BlobHttp.fetch(downloadGrant("bob", id).get("url").asText()).body());
    }

    /**
     * Appendix B.13 (g) and the §5.4 URL MUSTs: tampered and expired URLs are refused by the object store (a client
     * would not even fetch past {@code urlExpiresAtMs}); re-requesting the authorized route re-authorizes and mints a
     * fresh URL, which serves the bytes — recovery, never a fall-through (§5.9.5).
     */
    @Test
    void B13g_expiredUrlsAreRefusedAndAFreshRequestRecovers() throws Exception {
        byte[] bytes = randomBytes(4096);
        String id = BlobIds.compute(bytes);
        assertEquals(200, blobs.put("alice", id, bytes).statusCode());
        reference(id, bytes.length);
        byte[] pending = randomBytes(300);
        String pendingId = BlobIds.compute(pending);

        JsonNode download = downloadGrant("bob", id);
        String url = download.get("url").asText();
        String putUrl = json(blobs.grant("alice", pendingId, "{\"byteLength\":300}"))
                .get("url")
                .asText();
        assertEquals(403, BlobHttp.fetch(tamper(url)).statusCode(), "tampered signature");
        assertEquals(
                403,
                BlobHttp.fetch(url.replace(BlobIds.hex(id), BlobIds.hex(pendingId)))
                        .statusCode(),
                "the grant is for exactly one object");
        assertEquals(403, BlobHttp.putTo(tamper(putUrl), pending).statusCode());

        // past urlExpiresAtMs (a client would not even try): the object store refuses both grants
        long expires = Math.max(download.get("urlExpiresAtMs").asLong(), System.currentTimeMillis());
        awaitCondition(() -> System.currentTimeMillis() > expires + 1500, Duration.ofSeconds(TTL_SECONDS + 30));
        HttpResponse<byte[]> expired = BlobHttp.fetch(url);
        assertEquals(403, expired.statusCode(), BlobHttp.text(expired));
        assertEquals(403, BlobHttp.putTo(putUrl, pending).statusCode());
        assertError(blobs.get("alice", pendingId), 404, "blob.not_found");

        // recovery: re-request the authorized route — re-authorized, a fresh URL
        JsonNode fresh = downloadGrant("bob", id);
        assertNotEquals(url, fresh.get("url").asText());
        assertTrue(fresh.get("urlExpiresAtMs").asLong() > expires);
        HttpResponse<byte[]> ok = BlobHttp.fetch(fresh.get("url").asText());
        assertEquals(200, ok.statusCode());
        assertArrayEquals(bytes, ok.body());
        String freshPut = json(blobs.grant("alice", pendingId, "{\"byteLength\":300}"))
                .get("url")
                .asText();
        assertEquals(200, BlobHttp.putTo(freshPut, pending).statusCode());
        assertTrue(json(blobs.grant("alice", pendingId, "{\"byteLength\":300}"))
                .get("present")
                .asBoolean());
        assertFalse(
                json(blobs.grant("alice", pendingId, "{\"byteLength\":300}")).has("url"));
    }
}
