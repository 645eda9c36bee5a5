package dev.syncular.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.cli.HttpFailure;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import dev.syncular.server.sync.SyncScenariosContract;
import dev.syncular.server.testsupport.GrantTable;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.ScenarioAppProfile;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.PullHeader;
import dev.syncular.server.wire.SegmentRef;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The Appendix B scenario contract end to end: real HTTP round trips through the running Quarkus app
 * ({@code POST /sync}, {@code GET /segments/{id}}), the production engine, PostgreSQL storage and segment
 * store. Only scope resolution is host-controlled (a seam the spec names, §3.2).
 */
@QuarkusTest
@TestProfile(ScenarioAppProfile.class)
class HttpSyncScenariosTest extends SyncScenariosContract {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @Inject
    PostgresSyncStorage storage;

    @Inject
    Pool pool;

    @Inject
    GrantTable grants;

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    private String partition;

    @BeforeEach
    void freshPartition() {
        partition = "p-" + UUID.randomUUID();
    }

    private final Server server = new PostgresBackedServer() {
        @Override
        public SyncTestClient.Transport transport() {
            return new HttpTransport("http://localhost:" + port, partition);
        }

        @Override
        public String partition() {
            return partition;
        }

        @Override
        public void allow(String actorId, Map<String, List<String>> allowed) {
            grants.grant(partition, actorId, allowed);
        }

        @Override
        protected PostgresSyncStorage storage() {
            return HttpSyncScenariosTest.this.storage;
        }

        @Override
        protected Pool pool() {
            return HttpSyncScenariosTest.this.pool;
        }
    };

    @Override
    protected Server server() {
        return server;
    }

    @Test
    void oversizedBodiesAreRefusedBeforeAnyWork() {
        Map<String, Long> before = server.tableCounts();
        SyncTestClient c = new SyncTestClient(SCHEMA, server.transport(), "alice", "big-1");
        byte[] body = new byte[16 * 1024 * 1024 + 1];
        System.arraycopy(new byte[] {'S', 'S', 'P', '2', 3, 0, 1, 0}, 0, body, 0, 8);
        HttpFailure f = assertThrows(HttpFailure.class, () -> server.transport().roundTrip(c, body));
        assertEquals(413, f.status);
        assertTrue(f.body.contains("sync.invalid_request"), f.body);
        assertEquals(before, server.tableCounts());
    }

    private SyncTestClient signedReader(String clientId, int accept) {
        SyncTestClient c = new SyncTestClient(SCHEMA, server.transport(), "alice", clientId)
                .subscribe("notes-p1", "notes", Map.of("project_id", List.of("p1")));
        c.accept = accept;
        c.limitSnapshotRows = 50;
        return c;
    }

    private static final int SIGNED = PullHeader.ACCEPT_EXTERNAL_ROWS | PullHeader.ACCEPT_SIGNED_URLS;

    /** 120 notes of p1 written by alice: three external segments at 50 rows a page. */
    private void seedSigned(String prefix) {
        server.allow("alice", Map.of("project_id", List.of("p1")));
        SyncTestClient writer = new SyncTestClient(SCHEMA, server.transport(), "alice", prefix + "-w")
                .subscribe("notes-p1", "notes", Map.of("project_id", List.of("p1")));
        writer.sync();
        for (int i = 0; i < 120; i++) {
            writer.upsert("notes", note(prefix + "-" + i, "p1", "signed " + i), null);
        }
        writer.syncUntilIdle();
    }

    /**
     * Appendix B.12 (a) (§5.4): a bit-3 client bootstraps through descriptor-carried URLs — every external segment
     * fetched from the URL with no sync-server credentials, no direct download, every content address verified —
     * and converges.
     */
    @Test
    void B12a_bit3ClientBootstrapsThroughUrlsWithoutCredentials() {
        seedSigned("su-a");
        SyncTestClient reader = signedReader("su-a-r", SIGNED);
        reader.syncUntilIdle();
        assertTrue(reader.urlFetches >= 3, "every page by URL: " + reader.urlFetches);
        assertEquals(0, reader.segmentDownloads, "no direct download");
        assertTrue(reader.segmentRefs.stream().allMatch(r -> r.url() != null && r.urlExpiresAtMs() != null));
        assertEquals(120, reader.table("notes").size());
        assertEquals(server.rows("notes").keySet(), reader.table("notes").keySet());
    }

    /**
     * Appendix B.12 (c): a tampered URL is refused by the URL host (403); bytes corrupted on the way fail the §5.1
     * content address, the round aborts with nothing persisted and no fall-through to the direct endpoint, and the
     * re-pull converges.
     */
    @Test
    void B12c_tamperedUrlsAndBytesNeverFallThrough() {
        seedSigned("su-c");
        SyncTestClient probe = signedReader("su-c-p", SIGNED);
        probe.sync();
        probe.sync();
        SegmentRef ref = probe.segmentRefs.get(0);
        String url = ref.url();
        String tampered = url.substring(0, url.length() - 2) + (url.endsWith("AA") ? "BB" : "AA");
        HttpFailure denied =
                assertThrows(HttpFailure.class, () -> server.transport().fetchUrl(tampered));
        assertEquals(403, denied.status);
        assertTrue(server.transport().fetchUrl(url).length > 0, "the untampered URL is good");

        SyncTestClient reader = signedReader("su-c-r", SIGNED);
        reader.sync();
        reader.corruptNextSegment = true;
        assertThrows(IllegalStateException.class, reader::sync);
        assertEquals(-1, reader.subscriptions.get("notes-p1").cursor, "nothing persisted");
        assertTrue(reader.table("notes").isEmpty());
        assertEquals(0, reader.segmentDownloads, "no fall-through to the direct endpoint");
        reader.syncUntilIdle();
        assertEquals(0, reader.segmentDownloads);
        assertEquals(server.rows("notes").keySet(), reader.table("notes").keySet());
    }

    /** Appendix B.12 (d) (§4.2): without bit 3 descriptors carry no {@code url}/{@code urlExpiresAtMs}; with it they do. */
    @Test
    void B12d_descriptorsCarryUrlsOnlyWithBit3() {
        seedSigned("su-d");
        SyncTestClient plain = signedReader("su-d-p", PullHeader.ACCEPT_EXTERNAL_ROWS);
        plain.syncUntilIdle();
        assertFalse(plain.segmentRefs.isEmpty());
        assertTrue(plain.segmentRefs.stream().allMatch(r -> r.url() == null && r.urlExpiresAtMs() == null));
        assertEquals(0, plain.urlFetches);
        assertTrue(plain.segmentDownloads > 0);
        SyncTestClient signed = signedReader("su-d-s", SIGNED);
        signed.syncUntilIdle();
        assertTrue(signed.segmentRefs.stream().allMatch(r -> r.url() != null && r.urlExpiresAtMs() != null));
    }
}
