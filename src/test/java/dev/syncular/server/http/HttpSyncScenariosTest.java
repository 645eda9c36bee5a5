package dev.syncular.server.http;

import dev.syncular.server.cli.HttpFailure;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import dev.syncular.server.sync.ScopeResolver;
import dev.syncular.server.sync.SyncScenariosContract;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.PullHeader;
import dev.syncular.server.wire.SegmentRef;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Alternative;
import jakarta.inject.Inject;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The Appendix B scenario contract end to end: real HTTP round trips through the running Quarkus app
 * ({@code POST /sync}, {@code GET /segments/{id}}), the production engine, PostgreSQL storage and segment
 * store. Only scope resolution is host-controlled (a seam the spec names, §3.2).
 */
@QuarkusTest
@TestProfile(HttpSyncScenariosTest.NotesSchema.class)
class HttpSyncScenariosTest extends SyncScenariosContract {
    private static final Duration WAIT = Duration.ofSeconds(30);

    /**
     * The scenario schema in its own PostgreSQL schema, with the host-controlled grant table enabled; also the
     * profile of {@link HttpBlobScenariosTest} (one app for both: the contract uploads no blob, the blob scenarios
     * never meet the fairness limits), whose size cap it sets.
     */
    public static class NotesSchema implements QuarkusTestProfile {
        /** {@code syncular.blobs.max-bytes}, which {@link HttpBlobScenariosTest} probes. */
        static final int BLOB_MAX_BYTES = 64 * 1024;

        @Override
        public Map<String, String> getConfigOverrides() {
            // the contract's concurrency scenarios (50 duplicate deliveries of one actor at once) test idempotency,
            // not fairness: the per-actor round limit is off here (FairnessTest covers it)
            return Map.of(
                    "syncular.schema.path",
                    Path.of("src/test/resources/schema/notes.json")
                            .toAbsolutePath()
                            .toString(),
                    "syncular.storage.pg-schema",
                    "sync_e2e_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10),
                    "syncular.fairness.max-rounds-per-actor",
                    "0",
                    "syncular.fairness.max-push-operations-per-actor",
                    "0",
                    "syncular.blobs.max-bytes",
                    String.valueOf(BLOB_MAX_BYTES));
        }

        @Override
        public Set<Class<?>> getEnabledAlternatives() {
            return Set.of(GrantTable.class);
        }
    }

    /** Allowed scopes per (partition, actor) set by the test; an actor without a grant fails resolution. */
    @Alternative // selected only by this test's profile, never for the other tests' app
    @ApplicationScoped
    public static class GrantTable implements ScopeResolver {
        private final Map<String, Map<String, List<String>>> grants = new ConcurrentHashMap<>();

        /** A method, not a field write: the injected reference is a client proxy. */
        public void grant(String partition, String actorId, Map<String, List<String>> allowed) {
            grants.put(partition + "/" + actorId, allowed);
        }

        @Override
        public Uni<Map<String, List<String>>> resolveScopes(String actorId, String partition) {
            Map<String, List<String>> g = grants.get(partition + "/" + actorId);
            return g == null
                    ? Uni.createFrom().failure(new IllegalStateException("no grant"))
                    : Uni.createFrom().item(g);
        }
    }

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
        HttpFailure f = Assertions.assertThrows(
                HttpFailure.class, () -> server.transport().roundTrip(c, body));
        Assertions.assertEquals(413, f.status);
        Assertions.assertTrue(f.body.contains("sync.invalid_request"), f.body);
        Assertions.assertEquals(before, server.tableCounts());
    }

    /** §5.4 native signed URLs: issued only to bit-3 clients, fetched with no credentials, tamper-proof. */
    @Test
    void signedSegmentUrls() {
        server.allow("alice", Map.of("project_id", List.of("p1")));
        SyncTestClient writer = new SyncTestClient(SCHEMA, server.transport(), "alice", "su-w")
                .subscribe("notes-p1", "notes", Map.of("project_id", List.of("p1")));
        Map<String, Object> row = new HashMap<>();
        row.put("id", "su-1");
        row.put("project_id", "p1");
        row.put("title", "signed");
        row.put("body", null);
        row.put("priority", null);
        row.put("done", null);
        writer.upsert("notes", row, null);
        writer.syncUntilIdle();
        SyncTestClient reader = new SyncTestClient(SCHEMA, server.transport(), "alice", "su-r")
                .subscribe("notes-p1", "notes", Map.of("project_id", List.of("p1")));
        reader.accept = PullHeader.ACCEPT_EXTERNAL_ROWS | PullHeader.ACCEPT_SIGNED_URLS;
        reader.syncUntilIdle();
        Assertions.assertTrue(reader.urlFetches > 0);
        Assertions.assertEquals(0, reader.segmentDownloads);
        Assertions.assertTrue(reader.table("notes").containsKey("su-1"));
        SegmentRef ref = (SegmentRef) reader.lastResponse.frames().stream()
                .filter(f -> f instanceof SegmentRef)
                .findFirst()
                .orElse(null);
        if (ref == null) {
            // the last round was incremental; mint a fresh descriptor with a bootstrap of a new client
            SyncTestClient again = new SyncTestClient(SCHEMA, server.transport(), "alice", "su-r2")
                    .subscribe("notes-p1", "notes", Map.of("project_id", List.of("p1")));
            again.accept = reader.accept;
            again.sync();
            again.sync();
            ref = (SegmentRef) again.lastResponse.frames().stream()
                    .filter(f -> f instanceof SegmentRef)
                    .findFirst()
                    .orElseThrow();
        }
        Assertions.assertNotNull(ref.urlExpiresAtMs());
        String url = ref.url();
        String tampered = url.substring(0, url.length() - 2) + (url.endsWith("AA") ? "BB" : "AA");
        HttpFailure denied = Assertions.assertThrows(
                HttpFailure.class, () -> server.transport().fetchUrl(tampered));
        Assertions.assertEquals(403, denied.status);
        // Without bit 3 descriptors carry no URL.
        SyncTestClient plain = new SyncTestClient(SCHEMA, server.transport(), "alice", "su-p")
                .subscribe("notes-p1", "notes", Map.of("project_id", List.of("p1")));
        plain.accept = PullHeader.ACCEPT_EXTERNAL_ROWS;
        plain.syncUntilIdle();
        Assertions.assertEquals(0, plain.urlFetches);
        Assertions.assertTrue(plain.segmentDownloads > 0);
    }
}
