package dev.syncular.server.conformance;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.syncular.server.cli.HttpFailure;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.NotesAppProfile;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.CommitStatus;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.PullHeader;
import dev.syncular.server.wire.SegmentRef;
import dev.syncular.server.wire.realtime.ControlMessage;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.hamcrest.Matchers;
import org.junit.jupiter.api.Test;

/**
 * Drives the conformance host the way Syncular's catalog does (docs/CONFORMANCE.md): instances
 * with their own schemas, SSP2 rounds and segment downloads through each, isolation, pruning, row
 * inspection, the virtual clock, and close.
 */
@QuarkusTest
@TestProfile(NotesAppProfile.class)
public class ConformanceHostTest {
    static final String NOTES = "{\"version\":1,\"tables\":[{\"name\":\"notes\",\"primaryKey\":\"id\",\"columns\":["
            + "{\"name\":\"id\",\"type\":\"string\",\"nullable\":false},"
            + "{\"name\":\"project_id\",\"type\":\"string\",\"nullable\":false},"
            + "{\"name\":\"body\",\"type\":\"bytes\",\"nullable\":true}],\"scopes\":[\"project:{project_id}\"]}]}";
    static final String TODOS = "{\"version\":3,\"tables\":[{\"name\":\"todos\",\"primaryKey\":\"id\",\"columns\":["
            + "{\"name\":\"id\",\"type\":\"string\",\"nullable\":false},"
            + "{\"name\":\"list_id\",\"type\":\"string\",\"nullable\":false},"
            + "{\"name\":\"done\",\"type\":\"boolean\",\"nullable\":false}],"
            + "\"scopes\":[{\"pattern\":\"list:{list}\",\"column\":\"list_id\"}]}]}";

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    @Inject
    Pool pool;

    private String create(String schema, String partition, String extra) {
        return given().contentType("application/json")
                .body("{\"schema\":" + schema + ",\"partition\":\"" + partition + "\",\"nowMs\":1000000" + extra + "}")
                .post("/__conformance/instances")
                .then()
                .statusCode(200)
                .extract()
                .path("id");
    }

    private static JsonPath call(String id, String method, String args) {
        return given().contentType("application/json")
                .body("{\"args\":" + args + "}")
                .post("/__conformance/instances/" + id + "/call/" + method)
                .then()
                .statusCode(200)
                .extract()
                .jsonPath();
    }

    private SyncTestClient client(
            String id, String schemaJson, String actor, String table, Map<String, List<String>> scopes) {
        CompiledSchema schema = SchemaLoader.parse(schemaJson);
        return new SyncTestClient(
                        schema,
                        new HttpTransport("http://localhost:" + port + "/__conformance/instances/" + id, null),
                        actor,
                        actor + "-client")
                .subscribe("s", table, scopes);
    }

    @Test
    void capabilitiesListOnlyWhatWorks() {
        given().get("/__conformance/capabilities")
                .then()
                .statusCode(200)
                .body("name", equalTo("syncular-server-java"))
                .body(
                        "capabilities",
                        equalTo(List.of(
                                "signed-urls",
                                "blobs",
                                "crdt",
                                "validators",
                                "commit-validators",
                                "leases",
                                "backup-restore",
                                "idempotency-fault",
                                "blob-presign")));
    }

    static final String FILES = "{\"version\":1,\"tables\":[{\"name\":\"files\",\"primaryKey\":\"id\",\"columns\":["
            + "{\"name\":\"id\",\"type\":\"string\",\"nullable\":false},"
            + "{\"name\":\"project_id\",\"type\":\"string\",\"nullable\":false},"
            + "{\"name\":\"attachment\",\"type\":\"blob_ref\",\"nullable\":true}],\"scopes\":[\"project:{project_id}\"]}]}";

    /**
     * Capability {@code blob-presign} (Appendix B.13 (f), (h)): with the host playing object store and CDN, an upload
     * grant (§5.9.3), the PUT at the presigned URL with no actor, the push-time existence check, and an always-issue
     * download URL (§5.9.5) fetched by another actor; refused URLs; presign off answers no grant and bytes.
     */
    @Test
    void blobPresignGrantPutReferenceAndFetch() throws Exception {
        String id = create(FILES, "blob-presign", "");
        call(id, "setAllowedScopes", "[\"alice\",{\"project_id\":[\"p1\"]}]");
        call(id, "setAllowedScopes", "[\"carol\",{\"project_id\":[\"p1\"]}]");
        call(id, "setBlobPresign", "[true]");
        byte[] bytes = "presigned upload bytes".getBytes(StandardCharsets.UTF_8);
        String hex = HexFormat.of().formatHex(bytes);
        String blobId = "sha256:"
                + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));

        JsonPath grant = call(id, "uploadBlobGrant", "[\"alice\",\"" + blobId + "\"," + bytes.length + "]");
        assertEquals("url", grant.getString("result.kind"));
        String put = grant.getString("result.url");
        assertTrue(grant.getLong("result.urlExpiresAtMs") > 1_000_000L);
        // the object host refuses a GET of a PUT grant, a wrong length and bytes that are not the blob
        given().contentType("application/json")
                .body("{\"args\":[\"" + put + "\"]}")
                .post("/__conformance/instances/" + id + "/call/fetchBlobUrl")
                .then()
                .statusCode(403);
        given().contentType("application/json")
                .body("{\"args\":[\"" + put + "\",{\"$u8\":\"00" + hex + "\"}]}")
                .post("/__conformance/instances/" + id + "/call/putBlobUrl")
                .then()
                .statusCode(400);
        call(id, "putBlobUrl", "[\"" + put + "\",{\"$u8\":\"" + hex + "\"}]");
        assertEquals(
                "present",
                call(id, "uploadBlobGrant", "[\"alice\",\"" + blobId + "\"," + bytes.length + "]")
                        .getString("result.kind"));
        given().contentType("application/json")
                .body("{\"args\":[\"alice\",\"sha256:" + "ab".repeat(32) + "\","
                        + (ConformanceInstance.BLOB_MAX_BYTES + 1) + "]}")
                .post("/__conformance/instances/" + id + "/call/uploadBlobGrant")
                .then()
                .statusCode(413)
                .body("code", equalTo("blob.too_large"));

        // the reference passes the §5.9.6 existence check; another actor's download is a URL the CDN serves
        SyncTestClient alice = client(id, FILES, "alice", "files", Map.of("project_id", List.of("p1")));
        alice.upsert(
                "files",
                Map.of(
                        "id",
                        "f1",
                        "project_id",
                        "p1",
                        "attachment",
                        "{\"blobId\":\"" + blobId + "\",\"byteLength\":" + bytes.length + "}"),
                null);
        alice.syncUntilIdle();
        assertEquals(List.of("f1"), call(id, "readRows", "[\"files\"]").getList("result.rowId"));
        JsonPath download = call(id, "downloadBlob", "[\"carol\",\"" + blobId + "\"]");
        assertEquals("url", download.getString("result.kind"));
        String get = download.getString("result.url");
        assertEquals(hex, call(id, "fetchBlobUrl", "[\"" + get + "\"]").getString("result.$u8"));
        // an altered URL is refused; past its expiry on the instance clock, too
        given().contentType("application/json")
                .body("{\"args\":[\"" + get.replace("op=get", "op=got") + "\"]}")
                .post("/__conformance/instances/" + id + "/call/fetchBlobUrl")
                .then()
                .statusCode(403);
        call(id, "advanceClock", "[" + HostObjectStore.URL_TTL_MS + "]");
        given().contentType("application/json")
                .body("{\"args\":[\"" + get + "\"]}")
                .post("/__conformance/instances/" + id + "/call/fetchBlobUrl")
                .then()
                .statusCode(403);

        // presign off: no grant (the direct upload path), and downloads are bytes again
        call(id, "setBlobPresign", "[false]");
        assertEquals(
                "none",
                call(id, "uploadBlobGrant", "[\"alice\",\"sha256:" + "cd".repeat(32) + "\",3]")
                        .getString("result.kind"));
        JsonPath direct = call(id, "downloadBlob", "[\"carol\",\"" + blobId + "\"]");
        assertEquals("bytes", direct.getString("result.kind"));
        assertEquals(hex, direct.getString("result.bytes.$u8"));
    }

    /** Capability {@code blobs}: upload, the push-time existence check and row-derived download authorization. */
    @Test
    void blobsThroughTheProductionService() throws Exception {
        String id = create(FILES, "blobs", "");
        call(id, "setAllowedScopes", "[\"alice\",{\"project_id\":[\"p1\"]}]");
        call(id, "setAllowedScopes", "[\"bob\",{\"project_id\":[\"p2\"]}]");
        byte[] bytes = "attachment bytes".getBytes(StandardCharsets.UTF_8);
        String hex = HexFormat.of().formatHex(bytes);
        String blobId = "sha256:"
                + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        String ref = "{\"blobId\":\"" + blobId + "\",\"byteLength\":" + bytes.length + "}";

        // a push referencing a blob that is not uploaded yet is rejected (blob.not_found)
        SyncTestClient alice = client(id, FILES, "alice", "files", Map.of("project_id", List.of("p1")));
        alice.upsert("files", Map.of("id", "f1", "project_id", "p1", "attachment", ref), null);
        alice.syncUntilIdle();
        assertEquals(
                CommitStatus.REJECTED, alice.results.values().iterator().next().status());
        assertEquals(List.of(), call(id, "readRows", "[\"files\"]").getList("result"));

        // a wrong content address is refused with its catalogued code
        given().contentType("application/json")
                .body("{\"args\":[\"alice\",\"" + blobId + "\",{\"$u8\":\"00" + hex + "\"}]}")
                .post("/__conformance/instances/" + id + "/call/uploadBlob")
                .then()
                .statusCode(400)
                .body("code", equalTo("blob.hash_mismatch"));
        call(id, "uploadBlob", "[\"alice\",\"" + blobId + "\",{\"$u8\":\"" + hex + "\"},\"text/plain\"]");
        alice.upsert("files", Map.of("id", "f2", "project_id", "p1", "attachment", ref), null);
        alice.syncUntilIdle();
        assertEquals(List.of("f2"), call(id, "readRows", "[\"files\"]").getList("result.rowId"));

        JsonPath download = call(id, "downloadBlob", "[\"alice\",\"" + blobId + "\"]");
        assertEquals("bytes", download.getString("result.kind"));
        assertEquals(hex, download.getString("result.bytes.$u8"));
        // bob holds no scope of a referencing row: forbidden, never not-found
        given().contentType("application/json")
                .body("{\"args\":[\"bob\",\"" + blobId + "\"]}")
                .post("/__conformance/instances/" + id + "/call/downloadBlob")
                .then()
                .statusCode(403)
                .body("code", equalTo("blob.forbidden"));
        call(id, "close", "[]");
    }

    private RealtimeSocket socket(String id, String actor, String clientId) {
        return RealtimeSocket.connect(
                URI.create("ws://localhost:" + port + "/__conformance/instances/" + id + "/realtime?actorId=" + actor
                        + "&clientId=" + clientId),
                Map.of());
    }

    @Test
    void realtimeSocketOfAnInstance() throws Exception {
        String id = create(TODOS, "rt", ",\"limits\":{\"maxPresenceBytes\":64}");
        call(id, "setAllowedScopes", "[\"alice\",{\"list\":[\"*\"]}]");
        call(id, "setAllowedScopes", "[\"bob\",{\"list\":[\"*\"]}]");
        SyncTestClient a = client(id, TODOS, "alice", "todos", Map.of("list", List.of("l1")));
        SyncTestClient b = client(id, TODOS, "bob", "todos", Map.of("list", List.of("l1")));
        a.syncUntilIdle();
        b.syncUntilIdle();
        var sb = socket(id, "bob", b.clientId);
        assertEquals("{\"$conformance\":\"connected\"}", sb.texts.poll(30, TimeUnit.SECONDS));
        JsonNode hello = sb.nextEvent("hello").get("data");
        assertEquals("bob", hello.get("actorId").asText());
        assertFalse(hello.get("requiresSync").asBoolean(), "bob pulled to the head before connecting");
        // a commit through the instance is a §8.2 delta on the instance's socket
        a.upsert("todos", Map.of("id", "t1", "list_id", "l1", "done", false), null);
        a.sync();
        var commit = (CommitFrame) sb.nextDelta().frames().get(2);
        assertEquals("t1", commit.changes().get(0).rowId());
        // the instance's presence cap (limits.maxPresenceBytes = 64)
        sb.send(new ControlMessage.PresencePublish(
                "list:l1", JsonNodeFactory.instance.objectNode().put("k", "x".repeat(80))));
        assertEquals(
                "presence.too_large",
                sb.nextEvent("presence").get("data").get("error").asText());
        // an unknown instance: connect_error, then the close
        var unknown = socket("no-such-instance", "bob", "c");
        JsonNode refused = JsonMapper.builder().build().readTree(unknown.texts.poll(30, TimeUnit.SECONDS));
        assertEquals("connect_error", refused.get("$conformance").asText());
        assertEquals("sync.not_found", refused.get("error").get("code").asText());
        assertTrue(unknown.closed.get(30, TimeUnit.SECONDS) > 0);
        // close() ends the instance's sockets
        call(id, "close", "[]");
        assertEquals(1001, sb.closed.get(30, TimeUnit.SECONDS));
    }

    @Test
    void instancesAreIsolatedRealServers() {
        String a = create(NOTES, "shared", "");
        String b = create(TODOS, "shared", "");
        call(a, "setAllowedScopes", "[\"alice\",{\"project_id\":[\"p1\"]}]");
        call(b, "setAllowedScopes", "[\"alice\",{\"list\":[\"*\"]}]");
        SyncTestClient ca = client(a, NOTES, "alice", "notes", Map.of("project_id", List.of("p1")));
        ca.upsert("notes", Map.of("id", "n1", "project_id", "p1", "body", new byte[] {1, 2}), null);
        ca.syncUntilIdle();
        SyncTestClient cb = client(b, TODOS, "alice", "todos", Map.of("list", List.of("l1")));
        cb.upsert("todos", Map.of("id", "t1", "list_id", "l1", "done", false), null);
        cb.syncUntilIdle();

        JsonPath rowsA = call(a, "readRows", "[\"notes\"]");
        assertEquals(List.of("n1"), rowsA.getList("result.rowId"));
        assertEquals("0102", rowsA.getString("result[0].values.body.$bytes"));
        assertEquals("p1", rowsA.getString("result[0].scopes.project_id"));
        assertEquals(List.of("t1"), call(b, "readRows", "[\"todos\"]").getList("result.rowId"));
        // Same partition name, separate storage: A has no todos table, B never saw the note.
        given().contentType("application/json")
                .body("{\"args\":[\"todos\"]}")
                .post("/__conformance/instances/" + a + "/call/readRows")
                .then()
                .statusCode(400)
                .body("code", equalTo("sync.unknown_table"));
        assertEquals(1, call(b, "getMaxCommitSeq", "[]").getLong("result"));

        // An actor never granted anything has {}: its subscription is revoked; a failing resolver too.
        SyncTestClient stranger = client(a, NOTES, "mallory", "notes", Map.of("project_id", List.of("p1")));
        stranger.syncUntilIdle();
        assertEquals(0, stranger.table("notes").size());
        call(a, "setResolverFailing", "[true]");
        SyncTestClient again = client(a, NOTES, "alice", "notes", Map.of("project_id", List.of("p1")));
        again.syncUntilIdle();
        assertEquals(0, again.table("notes").size());
        call(a, "close", "[]");
        call(b, "close", "[]");
    }

    @Test
    void pruningHorizonAndTheVirtualClock() {
        String id = create(NOTES, "p", ",\"limits\":{\"segmentTtlMs\":60000}");
        call(id, "setAllowedScopes", "[\"alice\",{\"project_id\":[\"p1\"]}]");
        SyncTestClient c = client(id, NOTES, "alice", "notes", Map.of("project_id", List.of("p1")));
        for (int i = 0; i < 5; i++) {
            c.upsert("notes", Map.of("id", "n" + i, "project_id", "p1", "body", new byte[] {(byte) i}), null);
        }
        c.syncUntilIdle();
        assertEquals(1_000_000, call(id, "nowMs", "[]").getLong("result"));
        // The client is active: its cursor (5) holds the horizon; after it goes quiet, only the floor does.
        assertEquals(4, call(id, "prune", "[{\"minRetainedCommits\":1}]").getLong("result"));
        assertEquals(
                1_000_000 + 15 * 86_400_000L,
                call(id, "advanceClock", "[" + 15 * 86_400_000L + "]").getLong("result"));
        assertEquals(
                4,
                call(id, "prune", "[{\"minRetainedCommits\":1,\"activeWindowMs\":86400000}]")
                        .getLong("result"));
        assertEquals(4, call(id, "getHorizonSeq", "[]").getLong("result"));
        assertEquals(5, call(id, "getMaxCommitSeq", "[]").getLong("result"));

        // Segment TTL runs on the virtual clock: a download that works now is expired after advanceClock.
        SyncTestClient fresh = client(id, NOTES, "alice", "notes", Map.of("project_id", List.of("p1")));
        fresh.accept = PullHeader.ACCEPT_EXTERNAL_ROWS;
        fresh.sync();
        fresh.sync();
        SegmentRef ref = (SegmentRef) fresh.lastResponse.frames().stream()
                .filter(f -> f instanceof SegmentRef)
                .findFirst()
                .orElseThrow();
        HttpTransport t = new HttpTransport("http://localhost:" + port + "/__conformance/instances/" + id, null);
        String scopes = "{\"project_id\":[\"p1\"]}";
        assertTrue(t.downloadSegment(fresh, ref.segmentId(), scopes).length > 0);
        call(id, "advanceClock", "[120000]");
        HttpFailure expired = assertThrows(HttpFailure.class, () -> t.downloadSegment(fresh, ref.segmentId(), scopes));
        assertEquals(404, expired.status);
        assertTrue(expired.body.contains("sync.segment_expired"), expired.body);
        call(id, "close", "[]");
    }

    @Test
    void closeReleasesEverything() {
        String id = create(NOTES, "p", "");
        String schema = "conformance_" + id;
        assertEquals(
                1L,
                pool.preparedQuery("SELECT count(*) FROM pg_namespace WHERE nspname = $1")
                        .execute(Tuple.of(schema))
                        .await()
                        .atMost(Duration.ofSeconds(10))
                        .iterator()
                        .next()
                        .getLong(0));
        call(id, "close", "[]");
        assertEquals(
                0L,
                pool.preparedQuery("SELECT count(*) FROM pg_namespace WHERE nspname = $1")
                        .execute(Tuple.of(schema))
                        .await()
                        .atMost(Duration.ofSeconds(10))
                        .iterator()
                        .next()
                        .getLong(0));
        given().contentType("application/json")
                .body("{\"args\":[]}")
                .post("/__conformance/instances/" + id + "/call/nowMs")
                .then()
                .statusCode(404)
                .body("code", equalTo("sync.not_found"));
        given().contentType("application/vnd.syncular.sync.v2")
                .header("x-actor-id", "a")
                .body(new byte[] {1})
                .post("/__conformance/instances/" + id + "/sync")
                .then()
                .statusCode(404);
        assertFalse(schema.isEmpty());
    }

    @Test
    void badInstanceOptionsAnswerJson() {
        given().contentType("application/json")
                .body("{\"partition\":\"p\"}")
                .post("/__conformance/instances")
                .then()
                .statusCode(400)
                .body("code", equalTo("sync.invalid_request"));
        given().contentType("application/json")
                .body("{\"partition\":\"p\",\"schema\":{\"version\":1,\"tables\":[{\"name\":"
                        + "\"t\",\"primaryKey\":\"id\",\"columns\":[{\"name\":\"id\",\"type\":\"float\",\"nullable\":false}],"
                        + "\"scopes\":[\"k:{id}\"]}]}}")
                .post("/__conformance/instances")
                .then()
                .statusCode(400);
        List<Frame> none = List.of();
        assertTrue(none.isEmpty());
    }

    @Test
    void signedSegmentUrlsThroughTheHostCdn() {
        String id = signedInstanceWithOneNote();
        SyncTestClient r = client(id, NOTES, "bob", "notes", Map.of("project_id", List.of("p1")));
        call(id, "setAllowedScopes", "[\"bob\",{\"project_id\":[\"p1\"]}]");
        r.accept = PullHeader.ACCEPT_EXTERNAL_ROWS | PullHeader.ACCEPT_SIGNED_URLS;
        r.sync();
        r.sync();
        SegmentRef ref = (SegmentRef) r.lastResponse.frames().stream()
                .filter(f -> f instanceof SegmentRef)
                .findFirst()
                .orElseThrow();
        assertTrue(r.urlFetches > 0 && r.table("notes").containsKey("n1"));
        assertTrue(call(id, "fetchSegmentUrl", "[\"" + ref.url() + "\"]")
                        .getString("result.$u8")
                        .length()
                > 0);
        call(id, "advanceClock", "[121000]"); // past the TTL and the 60 s skew allowance
        given().contentType("application/json")
                .body("{\"args\":[\"" + ref.url() + "\"]}")
                .post("/__conformance/instances/" + id + "/call/fetchSegmentUrl")
                .then()
                .statusCode(403)
                .body("code", equalTo("sync.forbidden"));
        call(id, "close", "[]");
    }

    static final String DOCS = "{\"version\":1,\"tables\":[{\"name\":\"docs\",\"primaryKey\":\"id\",\"columns\":["
            + "{\"name\":\"id\",\"type\":\"string\",\"nullable\":false},"
            + "{\"name\":\"project_id\",\"type\":\"string\",\"nullable\":false},"
            + "{\"name\":\"meta\",\"type\":\"json\",\"nullable\":true}],\"scopes\":[\"project:{project_id}\"]}]}";

    /** §2.4: readRows renders a json value as the stored text itself (a JSON string), SQL NULL as JSON null. */
    @Test
    void readRowsRendersJsonValuesAsTheirVerbatimText() throws Exception {
        String id = create(DOCS, "p", "");
        call(id, "setAllowedScopes", "[\"alice\",{\"project_id\":[\"p1\"]}]");
        SyncTestClient c = client(id, DOCS, "alice", "docs", Map.of("project_id", List.of("p1")));
        c.upsert("docs", Map.of("id", "d1", "project_id", "p1", "meta", "{ \"k\" :  1 }"), null);
        c.upsert("docs", Map.of("id", "d2", "project_id", "p1", "meta", "null"), null);
        Map<String, Object> sqlNull = new HashMap<>(Map.of("id", "d3", "project_id", "p1"));
        sqlNull.put("meta", null);
        c.upsert("docs", sqlNull, null);
        c.syncUntilIdle();
        c.results.values().forEach(r -> assertEquals(CommitStatus.APPLIED, r.status(), r.toString()));

        String body = given().contentType("application/json")
                .body("{\"args\":[\"docs\"]}")
                .post("/__conformance/instances/" + id + "/call/readRows")
                .then()
                .statusCode(200)
                .extract()
                .asString();
        JsonNode rows = new ObjectMapper().readTree(body).path("result");
        assertEquals(3, rows.size(), body);
        JsonNode d1 = rows.get(0).path("values").path("meta");
        assertTrue(d1.isTextual(), body);
        assertEquals("{ \"k\" :  1 }", d1.textValue()); // byte for byte, whitespace kept
        JsonNode d2 = rows.get(1).path("values").path("meta");
        assertTrue(d2.isTextual(), body);
        assertEquals("null", d2.textValue()); // a stored document null is the string "null"
        assertTrue(rows.get(2).path("values").path("meta").isNull(), body); // SQL NULL only
        call(id, "close", "[]");
    }

    /**
     * Appendix B.12 (b), server side (§5.4, §1.4 rule 5): a TTL of zero mints descriptors whose URL is born expired
     * (a client never fetches it, and the round aborts with nothing persisted: the client's part); a re-pull under a
     * fresh TTL gets a live URL that serves the segment; the URL host refuses the expired one past the skew allowance.
     */
    @Test
    void B12b_bornExpiredUrlsAreRefusedAndAFreshTtlRecovers() {
        String id = signedInstanceWithOneNote();
        long now = call(id, "nowMs", "[]").getLong("result");

        given().contentType("application/json")
                .body("{\"args\":[0]}")
                .post("/__conformance/instances/" + id + "/call/setSignedUrlTtlSeconds")
                .then()
                .statusCode(200)
                .body("$", Matchers.hasKey("result"))
                .body("result", Matchers.nullValue());
        SegmentRef expired = signedRef(id);
        assertTrue(
                expired.url() != null && expired.urlExpiresAtMs() <= now,
                "born expired: " + expired.urlExpiresAtMs() + " vs clock " + now);

        assertTrue(call(id, "setSignedUrlTtlSeconds", "[900]").get("result") == null);
        SegmentRef live = signedRef(id);
        assertEquals(now + 900_000, live.urlExpiresAtMs(), 1_000.0);
        assertTrue(call(id, "fetchSegmentUrl", "[\"" + live.url() + "\"]")
                        .getString("result.$u8")
                        .length()
                > 0);
        // the URL host refuses the born-expired URL once past its exp and the §5.4 skew allowance (60 s) — a client
        // never fetches it at all — while the fresh one still serves
        call(id, "advanceClock", "[61000]");
        given().contentType("application/json")
                .body("{\"args\":[\"" + expired.url() + "\"]}")
                .post("/__conformance/instances/" + id + "/call/fetchSegmentUrl")
                .then()
                .statusCode(403)
                .body("code", equalTo("sync.forbidden"));
        assertTrue(call(id, "fetchSegmentUrl", "[\"" + live.url() + "\"]")
                        .getString("result.$u8")
                        .length()
                > 0);
        call(id, "close", "[]");
    }

    /** An instance with signed URLs (60 s) where alice wrote note n1 in project p1. */
    private String signedInstanceWithOneNote() {
        String id = create(NOTES, "p", ",\"signedUrls\":{\"ttlSeconds\":60}");
        call(id, "setAllowedScopes", "[\"alice\",{\"project_id\":[\"p1\"]}]");
        SyncTestClient w = client(id, NOTES, "alice", "notes", Map.of("project_id", List.of("p1")));
        w.upsert("notes", Map.of("id", "n1", "project_id", "p1", "body", new byte[] {7}), null);
        w.syncUntilIdle();
        return id;
    }

    /** A fresh reader's first bootstrap descriptor, requested with URLs (accept bit 3). */
    private SegmentRef signedRef(String id) {
        SyncTestClient r = client(id, NOTES, "alice", "notes", Map.of("project_id", List.of("p1")));
        r.accept = PullHeader.ACCEPT_EXTERNAL_ROWS | PullHeader.ACCEPT_SIGNED_URLS;
        r.sync();
        r.sync();
        return r.segmentRefs.stream()
                .filter(ref -> ref.url() != null)
                .findFirst()
                .orElseThrow();
    }
}
