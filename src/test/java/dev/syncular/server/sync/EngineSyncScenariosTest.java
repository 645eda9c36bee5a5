package dev.syncular.server.sync;

import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.segments.memory.InMemorySegmentStore;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.SyncTestClient.TransportFailure;
import dev.syncular.server.testsupport.TestPostgres;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.MessageDecoder;
import dev.syncular.server.wire.WireException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/** The scenario contract against the engine in-process, on real PostgreSQL storage. */
class EngineSyncScenariosTest extends SyncScenariosContract {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static Vertx vertx;
    private static Pool pool;
    private static String pgSchema;
    private static PostgresSyncStorage storage;
    private static SyncEngine engine;
    private static final Map<String, Map<String, List<String>>> ALLOWED = new ConcurrentHashMap<>();
    private static final java.util.concurrent.atomic.AtomicInteger RESOLUTIONS = new java.util.concurrent.atomic.AtomicInteger();
    private String partition;

    @BeforeAll
    static void start() {
        vertx = Vertx.vertx();
        pool = TestPostgres.pool(vertx, 8);
        pgSchema = "sync_engine_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        storage = new PostgresSyncStorage(pool, pgSchema);
        storage.ensureSchema(SCHEMA).await().atMost(WAIT);
        ScopeResolver resolver = (actor, partition) -> {
            RESOLUTIONS.incrementAndGet();
            Map<String, List<String>> allowed = ALLOWED.get(partition + "/" + actor);
            return allowed == null ? io.smallrye.mutiny.Uni.createFrom().failure(new IllegalStateException("no grant"))
                    : io.smallrye.mutiny.Uni.createFrom().item(allowed);
        };
        engine = new SyncEngine(SchemaWindow.single(SCHEMA), storage, new InMemorySegmentStore(), resolver,
                SyncLimits.DEFAULTS, System::currentTimeMillis);
    }

    @AfterAll
    static void stop() {
        pool.query("DROP SCHEMA IF EXISTS \"" + pgSchema + "\" CASCADE").execute().await().atMost(WAIT);
        pool.close().await().atMost(WAIT);
        vertx.close().await().atMost(WAIT);
    }

    @BeforeEach
    void freshPartition() {
        partition = "p-" + UUID.randomUUID();
    }

    private static final ObjectMapper JSON = new ObjectMapper();

    private static TransportFailure failure(Throwable t) {
        if (t instanceof SyncError e) {
            return new TransportFailure(e.code().httpStatus, "{\"code\":\"" + e.code().code + "\"}");
        }
        if (t instanceof WireException e) {
            return new TransportFailure(400, "{\"code\":\"" + e.code() + "\"}");
        }
        throw new AssertionError("unexpected failure", t);
    }

    private final Server server = new PostgresBackedServer() {
        @Override
        public SyncTestClient.Transport transport() {
            return new SyncTestClient.Transport() {
                @Override
                public byte[] roundTrip(SyncTestClient client, byte[] request) {
                    try {
                        Message m = MessageDecoder.decodeRequest(request);
                        return Message.response(engine.handle(new SyncRequestContext(client.actorId, partition), m)
                                .await().atMost(WAIT)).encode();
                    } catch (SyncError | WireException e) {
                        throw failure(e);
                    }
                }

                @Override
                public byte[] downloadSegment(SyncTestClient client, String segmentId, String scopesHeader) {
                    try {
                        @SuppressWarnings("unchecked")
                        Map<String, List<String>> requested = JSON.readValue(scopesHeader, Map.class);
                        return engine.authorizeSegment(new SyncRequestContext(client.actorId, partition), segmentId,
                                requested).await().atMost(WAIT).bytes();
                    } catch (SyncError e) {
                        throw failure(e);
                    } catch (java.io.IOException e) {
                        throw new AssertionError(e);
                    }
                }
            };
        }

        @Override
        public String partition() {
            return partition;
        }

        @Override
        public void allow(String actorId, Map<String, List<String>> allowed) {
            ALLOWED.put(partition + "/" + actorId, allowed);
        }

        @Override
        protected PostgresSyncStorage storage() {
            return storage;
        }

        @Override
        protected Pool pool() {
            return pool;
        }
    };

    @Override
    protected Server server() {
        return server;
    }

    /** An image larger than the store takes is not published: that bootstrap (and later ones) page rows. */
    @org.junit.jupiter.api.Test
    void imagesAboveTheStoreCapFallBackToTheRowsLane() {
        server.allow("alice", Map.of("project_id", List.of("p1")));
        SyncTestClient writer = new SyncTestClient(SCHEMA, server.transport(), "alice", "cap-w")
                .subscribe("n", "notes", Map.of("project_id", List.of("p1")));
        List<dev.syncular.server.wire.PushOperation> ops = new java.util.ArrayList<>();
        for (int i = 0; i < 120; i++) {
            Map<String, Object> row = new java.util.HashMap<>();
            row.put("id", "cap-" + i);
            row.put("project_id", "p1");
            row.put("title", "t" + i);
            row.put("body", null);
            row.put("priority", (long) i);
            row.put("done", false);
            ops.add(writer.upsertOp("notes", row, null)); // inserts carry every column (§6.2)
        }
        writer.commit(ops);
        writer.syncUntilIdle();
        dev.syncular.server.segments.memory.InMemorySegmentStore small =
                new dev.syncular.server.segments.memory.InMemorySegmentStore(4096);
        SyncEngine capped = new SyncEngine(SchemaWindow.single(SCHEMA), storage, small,
                (actor, p) -> io.smallrye.mutiny.Uni.createFrom().item(Map.of("project_id", List.of("p1"))),
                SyncLimits.DEFAULTS, System::currentTimeMillis);
        SyncTestClient.Transport cappedTransport = new SyncTestClient.Transport() {
            @Override
            public byte[] roundTrip(SyncTestClient client, byte[] request) {
                return Message.response(capped.handle(new SyncRequestContext(client.actorId, partition),
                        MessageDecoder.decodeRequest(request)).await().atMost(WAIT)).encode();
            }

            @Override
            public byte[] downloadSegment(SyncTestClient client, String segmentId, String scopesHeader) {
                return capped.authorizeSegment(new SyncRequestContext(client.actorId, partition), segmentId,
                        Map.of("project_id", List.of("p1"))).await().atMost(WAIT).bytes();
            }
        };
        for (int round = 0; round < 2; round++) {
            SyncTestClient b = new SyncTestClient(SCHEMA, cappedTransport, "bob", "cap-b" + round)
                    .subscribe("n", "notes", Map.of("project_id", List.of("p1")));
            b.accept = dev.syncular.server.wire.PullHeader.ACCEPT_EXTERNAL_ROWS
                    | dev.syncular.server.wire.PullHeader.ACCEPT_SQLITE;
            b.limitSnapshotRows = 50;
            b.syncUntilIdle();
            org.junit.jupiter.api.Assertions.assertEquals(120, b.table("notes").size());
            org.junit.jupiter.api.Assertions.assertTrue(b.segmentRefs.size() >= 3);
            org.junit.jupiter.api.Assertions.assertTrue(b.segmentRefs.stream()
                    .allMatch(r -> r.mediaType() == dev.syncular.server.wire.MediaType.ROWS));
        }
    }

    /**
     * A commit of thousands of operations (the host raised the cap) applies without growing the stack per
     * operation: the suite runs with the production thread stack size (-Xss512k, pom.xml), where a recursive
     * walk over the operations overflowed at about a thousand.
     */
    @org.junit.jupiter.api.Test
    void hugeCommitsDoNotGrowTheStack() {
        server.allow("alice", Map.of("project_id", List.of("p1")));
        SyncEngine big = new SyncEngine(SchemaWindow.single(SCHEMA), storage, new InMemorySegmentStore(),
                (actor, p) -> io.smallrye.mutiny.Uni.createFrom().item(Map.of("project_id", List.of("p1"))),
                new SyncLimits(10_000, SyncLimits.DEFAULTS.inlineSegmentMaxBytes(), SyncLimits.DEFAULTS.segmentTtlMs()),
                System::currentTimeMillis);
        SyncTestClient.Transport transport = new SyncTestClient.Transport() {
            @Override
            public byte[] roundTrip(SyncTestClient client, byte[] request) {
                return Message.response(big.handle(new SyncRequestContext(client.actorId, partition),
                        MessageDecoder.decodeRequest(request)).await().atMost(WAIT)).encode();
            }

            @Override
            public byte[] downloadSegment(SyncTestClient client, String segmentId, String scopesHeader) {
                throw new AssertionError("inline only");
            }
        };
        SyncTestClient c = new SyncTestClient(SCHEMA, transport, "alice", "huge-1")
                .subscribe("n", "notes", Map.of("project_id", List.of("p1")));
        List<dev.syncular.server.wire.PushOperation> ops = new java.util.ArrayList<>();
        for (int i = 0; i < 5_000; i++) {
            Map<String, Object> row = new java.util.HashMap<>();
            row.put("id", "huge-" + i);
            row.put("project_id", "p1");
            row.put("title", "t");
            row.put("body", null);
            row.put("priority", null);
            row.put("done", null);
            ops.add(c.upsertOp("notes", row, null));
        }
        String id = c.commit(ops);
        c.syncUntilIdle();
        org.junit.jupiter.api.Assertions.assertTrue(SyncTestClient.applied(c.result(id)));
        org.junit.jupiter.api.Assertions.assertEquals(5_000, server.rows("notes").size());
    }

    /** §3.2 rule 3: one resolution per request, shared by its pushes (§3.4 step 1) and every subscription. */
    @org.junit.jupiter.api.Test
    void scopesResolveAtMostOncePerRequest() {
        server.allow("alice", Map.of("project_id", List.of("p1", "p2")));
        SyncTestClient c = new SyncTestClient(SCHEMA, server.transport(), "alice", "once-1")
                .subscribe("a", "notes", Map.of("project_id", List.of("p1")))
                .subscribe("b", "notes", Map.of("project_id", List.of("p2")));
        c.sync();
        c.upsert("notes", Map.of("id", "r1", "project_id", "p1", "title", "t"), null);
        c.upsert("notes", Map.of("id", "r2", "project_id", "p2", "title", "t"), null);
        RESOLUTIONS.set(0);
        c.sync();
        org.junit.jupiter.api.Assertions.assertEquals(1, RESOLUTIONS.get());
        org.junit.jupiter.api.Assertions.assertEquals(2, c.results.size());
    }
}
