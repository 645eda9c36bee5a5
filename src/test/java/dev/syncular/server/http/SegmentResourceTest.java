package dev.syncular.server.http;

import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.syncular.server.segments.SegmentPublication;
import dev.syncular.server.segments.SegmentStore;
import dev.syncular.server.storage.PartitionState;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import dev.syncular.server.wire.CanonicalJson;
import dev.syncular.server.wire.MediaType;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@QuarkusTest
class SegmentResourceTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String SCOPES = "{\"list_id\":[\"l1\"]}";

    @Inject
    PostgresSyncStorage storage;

    @Inject
    SegmentStore segments;

    String partition;
    String segmentId;
    byte[] bytes;

    @BeforeEach
    void publish() {
        partition = "seg-" + UUID.randomUUID();
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 5000; i++) {
            sb.append("row ").append(i).append(" of ").append(partition).append('\n');
        }
        bytes = sb.toString().getBytes(StandardCharsets.UTF_8);
        segmentId = publish(bytes, List.of("l1"), System.currentTimeMillis() + 3_600_000);
    }

    private String publish(byte[] content, List<String> lists, long expiresAtMs) {
        PartitionState state = storage.touchPartition(partition, System.currentTimeMillis())
                .await()
                .atMost(WAIT);
        String id = "sha256:" + CanonicalJson.sha256Hex(content);
        long now = System.currentTimeMillis();
        segments.publish(
                        id,
                        content,
                        new SegmentPublication(
                                partition,
                                state.logEpoch(),
                                "todos",
                                1,
                                MediaType.ROWS,
                                CanonicalJson.scopeDigest(Map.of("list_id", lists)),
                                0,
                                null,
                                null,
                                5000,
                                now,
                                expiresAtMs))
                .await()
                .atMost(WAIT);
        return id;
    }

    private RequestSpecification get() {
        return Ssp2.raw()
                .header("x-actor-id", "alice")
                .header("x-syncular-partition", partition)
                .header("X-Syncular-Scopes", SCOPES);
    }

    private static void assertCachingHeaders(Response r, String segmentId) {
        r.then()
                .header("ETag", equalTo("\"" + segmentId + "\""))
                .header("Cache-Control", equalTo("private, max-age=0"))
                .header("Vary", equalTo("Authorization, X-Syncular-Scopes, Accept-Encoding"));
    }

    @Test
    void downloadsTheBytesWithCachingHeaders() {
        Response r = get().header("Accept-Encoding", "identity").get("/segments/" + segmentId);
        r.then()
                .statusCode(200)
                .contentType(startsWith("application/octet-stream"))
                .header("Content-Encoding", nullValue());
        assertCachingHeaders(r, segmentId);
        assertArrayEquals(bytes, r.asByteArray());
    }

    @Test
    void ifNoneMatchIs304() {
        Response r = get().header("If-None-Match", "\"" + segmentId + "\"").get("/segments/" + segmentId);
        r.then().statusCode(304);
        assertCachingHeaders(r, segmentId);
        assertEquals(0, r.asByteArray().length);
        get().header("If-None-Match", "\"sha256:other\"")
                .header("Accept-Encoding", "identity")
                .get("/segments/" + segmentId)
                .then()
                .statusCode(200);
    }

    @Test
    void gzipAndZstdContentEncoding() {
        Response gz = get().header("Accept-Encoding", "gzip").get("/segments/" + segmentId);
        gz.then().statusCode(200).header("Content-Encoding", equalTo("gzip"));
        assertCachingHeaders(gz, segmentId);
        assertArrayEquals(bytes, Ssp2.inflate(gz.asByteArray(), "gzip"));

        Response zs = get().header("Accept-Encoding", "zstd, gzip").get("/segments/" + segmentId);
        zs.then().statusCode(200).header("Content-Encoding", equalTo("zstd"));
        assertArrayEquals(bytes, Ssp2.inflate(zs.asByteArray(), "zstd"));
    }

    @Test
    void requiresAuthentication() {
        Ssp2.raw()
                .header("X-Syncular-Scopes", SCOPES)
                .get("/segments/" + segmentId)
                .then()
                .statusCode(401)
                .body("code", equalTo("sync.auth_required"));
    }

    @Test
    void missingOrMalformedScopesHeaderIs400() {
        Ssp2.raw()
                .header("x-actor-id", "alice")
                .header("x-syncular-partition", partition)
                .get("/segments/" + segmentId)
                .then()
                .statusCode(400)
                .body("code", equalTo("sync.invalid_request"));
        Ssp2.raw()
                .header("x-actor-id", "alice")
                .header("x-syncular-partition", partition)
                .header("X-Syncular-Scopes", "{\"list_id\":\"l1\"}")
                .get("/segments/" + segmentId)
                .then()
                .statusCode(400)
                .body("code", equalTo("sync.invalid_request"));
    }

    @Test
    void otherScopesAre403Forbidden() {
        Ssp2.raw()
                .header("x-actor-id", "alice")
                .header("x-syncular-partition", partition)
                .header("X-Syncular-Scopes", "{\"list_id\":[\"l2\"]}")
                .get("/segments/" + segmentId)
                .then()
                .statusCode(403)
                .contentType(startsWith("application/json"))
                .body("code", equalTo("sync.forbidden"))
                .body("category", equalTo("forbidden"))
                .body("recommendedAction", equalTo("checkPermissions"));
    }

    @Test
    void unknownSegmentIs404NotFound() {
        get().get("/segments/sha256:" + "0".repeat(64)).then().statusCode(404).body("code", equalTo("sync.not_found"));
    }

    @Test
    void otherPartitionIs404NotFound() {
        Ssp2.raw()
                .header("x-actor-id", "alice")
                .header("x-syncular-partition", partition + "-other")
                .header("X-Syncular-Scopes", SCOPES)
                .get("/segments/" + segmentId)
                .then()
                .statusCode(404)
                .body("code", equalTo("sync.not_found"));
    }

    @Test
    void expiredSegmentIs404SegmentExpired() {
        String expired = publish(
                ("expired " + partition).getBytes(StandardCharsets.UTF_8),
                List.of("l1"),
                System.currentTimeMillis() - 1000);
        get().get("/segments/" + expired)
                .then()
                .statusCode(404)
                .body("code", equalTo("sync.segment_expired"))
                .body("retryable", equalTo(true));
    }
}
