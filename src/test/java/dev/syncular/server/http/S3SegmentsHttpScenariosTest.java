package dev.syncular.server.http;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.cli.HttpFailure;
import dev.syncular.server.testsupport.PrometheusScrape;
import dev.syncular.server.testsupport.ScenarioAppProfile;
import dev.syncular.server.testsupport.StartsProcesses;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestS3;
import dev.syncular.server.wire.MediaType;
import dev.syncular.server.wire.PullHeader;
import dev.syncular.server.wire.PushOperation;
import dev.syncular.server.wire.SegmentRef;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The whole Appendix B scenario contract again, with bootstrap segments in S3 ({@code syncular.segments.store=s3})
 * on a real S3-compatible server that verifies signatures ({@link TestS3}), plus scenario 12 through delegated
 * presign (§5.4): descriptors carry provider presigned GETs of {@code seg/sha256/<hex>}, fetched from the object
 * store with no sync-server credentials.
 */
@StartsProcesses
@QuarkusTest
@TestProfile(S3SegmentsHttpScenariosTest.S3Segments.class)
class S3SegmentsHttpScenariosTest extends HttpSyncScenariosTest {

    public static class S3Segments extends ScenarioAppProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            Map<String, String> config = new HashMap<>(super.getConfigOverrides());
            config.putAll(TestS3.quarkusConfig());
            config.put("syncular.segments.store", "s3");
            config.put("syncular.s3.bucket", TestS3.newBucket());
            config.put("syncular.s3.key-prefix", "sync/");
            config.put("syncular.s3.presign-ttl", "5m");
            return config;
        }
    }

    private SyncTestClient seeded(String prefix, int count) {
        server().allow("alice", Map.of("project_id", List.of("p1")));
        SyncTestClient writer = new SyncTestClient(SCHEMA, server().transport(), "alice", prefix + "-w")
                .subscribe("notes-p1", "notes", Map.of("project_id", List.of("p1")));
        List<PushOperation> ops = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Map<String, Object> row = new HashMap<>();
            row.put("id", String.format("%s-%04d", prefix, i));
            row.put("project_id", "p1");
            row.put("title", "t" + i);
            row.put("body", null);
            row.put("priority", (long) i);
            row.put("done", i % 2 == 0);
            ops.add(writer.upsertOp("notes", row, null));
        }
        writer.commit(ops);
        writer.syncUntilIdle();
        return writer;
    }

    private SyncTestClient reader(String clientId, int accept) {
        SyncTestClient c = new SyncTestClient(SCHEMA, server().transport(), "alice", clientId)
                .subscribe("notes-p1", "notes", Map.of("project_id", List.of("p1")));
        c.accept = accept;
        c.limitSnapshotRows = 40;
        return c;
    }

    /**
     * Appendix B.12 with delegated presign (§5.4 equivalence rule): (a) every page fetched from the object store's
     * presigned URL, none served here, the image lane too; (c) a tampered URL is refused by the store; (d) without
     * bit 3 no URL and the direct route serves the same bytes.
     */
    @Test
    void B12_delegatedPresignDeliversFromTheObjectStore() {
        seeded("ps", 150);
        int rowsAndUrls = PullHeader.ACCEPT_EXTERNAL_ROWS | PullHeader.ACCEPT_SIGNED_URLS;

        // (a) issue → fetch → verify: every external segment comes from the object store, zero direct downloads
        SyncTestClient a = reader("ps-a", rowsAndUrls);
        double presigned = segmentBytes("presigned");
        double servedHere = segmentBytes("direct");
        a.syncUntilIdle();
        assertEquals(150, a.table("notes").size());
        assertTrue(a.urlFetches >= 4, "one URL per page");
        assertEquals(0, a.segmentDownloads);
        // the bytes handed to the object store are counted as presigned, none as served here
        assertEquals(
                a.segmentRefs.stream().mapToLong(SegmentRef::byteLength).sum(),
                Math.round(segmentBytes("presigned") - presigned));
        assertEquals(servedHere, segmentBytes("direct"));
        for (SegmentRef ref : a.segmentRefs) {
            assertTrue(ref.url().startsWith(TestS3.endpoint() + "/"), ref.url());
            assertTrue(ref.url().contains("/sync/seg/sha256/" + ref.segmentId().substring(7) + "?"), ref.url());
            assertNotNull(ref.urlExpiresAtMs());
            assertTrue(ref.urlExpiresAtMs() <= System.currentTimeMillis() + 5 * 60_000 + 1_000);
        }

        // the SQLite image lane travels the same way
        SyncTestClient img = reader("ps-img", rowsAndUrls | PullHeader.ACCEPT_SQLITE);
        img.syncUntilIdle();
        assertEquals(1, img.segmentRefs.size());
        assertEquals(MediaType.SQLITE, img.segmentRefs.get(0).mediaType());
        assertTrue(img.segmentRefs.get(0).url().startsWith(TestS3.endpoint() + "/"));
        assertEquals(0, img.segmentDownloads);
        assertEquals(a.table("notes").keySet(), img.table("notes").keySet());

        // (c) tamper: another object under the same signature is refused by the store
        SegmentRef first = a.segmentRefs.get(0);
        SegmentRef second = a.segmentRefs.get(1);
        String tampered = first.url()
                .replace(first.segmentId().substring(7), second.segmentId().substring(7));
        HttpFailure denied =
                assertThrows(HttpFailure.class, () -> server().transport().fetchUrl(tampered));
        assertEquals(403, denied.status);

        // (d) gating: without bit 3 no url, and the direct route serves the S3-stored bytes (re-authorized)
        SyncTestClient direct = reader("ps-d", PullHeader.ACCEPT_EXTERNAL_ROWS);
        direct.syncUntilIdle();
        assertTrue(direct.segmentRefs.stream().allMatch(r -> r.url() == null && r.urlExpiresAtMs() == null));
        assertEquals(0, direct.urlFetches);
        assertTrue(direct.segmentDownloads >= 4);
        assertEquals(a.table("notes").keySet(), direct.table("notes").keySet());
        byte[] viaUrl = server().transport().fetchUrl(first.url());
        assertArrayEquals(
                viaUrl, server().transport().downloadSegment(direct, first.segmentId(), "{\"project_id\":[\"p1\"]}"));
        assertNull(direct.subscriptions.get("notes-p1").bootstrapState);
    }

    private static double segmentBytes(String delivery) {
        return PrometheusScrape.scrape().value("syncular_segments_bytes_total", Map.of("delivery", delivery));
    }
}
