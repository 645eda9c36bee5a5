package dev.syncular.server.sync;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.cli.HttpFailure;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.segments.SegmentPublication;
import dev.syncular.server.segments.SegmentStore;
import dev.syncular.server.segments.SegmentStoreStats;
import dev.syncular.server.segments.StoredSegment;
import dev.syncular.server.segments.memory.InMemorySegmentStore;
import dev.syncular.server.storage.ClientRecord;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import dev.syncular.server.testsupport.EngineTransport;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestPostgres;
import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.MediaType;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.MessageDecoder;
import dev.syncular.server.wire.PullHeader;
import dev.syncular.server.wire.PushOperation;
import dev.syncular.server.wire.SubEnd;
import dev.syncular.server.wire.SubStart;
import dev.syncular.server.wire.SubscriptionStatus;
import dev.syncular.server.wire.WireException;
import io.opentelemetry.context.Context;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The scenario contract against the engine in-process, on real PostgreSQL storage. */
class EngineSyncScenariosTest extends SyncScenariosContract {
    private static final Duration WAIT = Duration.ofSeconds(120); // an upper bound on a loaded machine, not a pause
    private static Vertx vertx;
    private static Pool pool;
    private static String pgSchema;
    private static PostgresSyncStorage storage;
    private static SyncEngine engine;
    private static final Map<String, Map<String, List<String>>> ALLOWED = new ConcurrentHashMap<>();
    private static final AtomicInteger RESOLUTIONS = new AtomicInteger();
    private String partition;

    @BeforeAll
    static void start() {
        vertx = Vertx.vertx();
        pool = TestPostgres.pool(vertx, 8);
        pgSchema =
                "sync_engine_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        storage = new PostgresSyncStorage(pool, pgSchema, PostgresSyncStorage.Settings.DEFAULTS);
        storage.ensureSchema(SCHEMA).await().atMost(WAIT);
        ScopeResolver resolver = (actor, partition) -> {
            RESOLUTIONS.incrementAndGet();
            Map<String, List<String>> allowed = ALLOWED.get(partition + "/" + actor);
            return allowed == null
                    ? Uni.createFrom().failure(new IllegalStateException("no grant"))
                    : Uni.createFrom().item(allowed);
        };
        engine = new SyncEngine(
                EngineParts.builder(SchemaWindow.single(SCHEMA), storage, new InMemorySegmentStore(), resolver)
                        .build());
    }

    @AfterAll
    static void stop() {
        pool.query("DROP SCHEMA IF EXISTS \"" + pgSchema + "\" CASCADE")
                .execute()
                .await()
                .atMost(WAIT);
        pool.close().await().atMost(WAIT);
        vertx.close().await().atMost(WAIT);
    }

    @BeforeEach
    void freshPartition() {
        partition = "p-" + UUID.randomUUID();
    }

    private static final ObjectMapper JSON = new ObjectMapper();

    private static HttpFailure failure(Throwable t) {
        if (t instanceof SyncError e) {
            return new HttpFailure(e.code().httpStatus, "{\"code\":\"" + e.code().code + "\"}");
        }
        if (t instanceof WireException e) {
            return new HttpFailure(400, "{\"code\":\"" + e.code() + "\"}");
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
                        return Message.response(engine.handle(
                                                new SyncRequestContext(client.actorId, partition),
                                                m,
                                                SyncEngine.Binding.HTTP,
                                                Context.root())
                                        .await()
                                        .atMost(WAIT))
                                .encode();
                    } catch (SyncError | WireException e) {
                        throw failure(e);
                    }
                }

                @Override
                public byte[] downloadSegment(SyncTestClient client, String segmentId, String scopesHeader) {
                    try {
                        @SuppressWarnings("unchecked")
                        Map<String, List<String>> requested = JSON.readValue(scopesHeader, Map.class);
                        return engine.authorizeSegment(
                                        new SyncRequestContext(client.actorId, partition), segmentId, requested)
                                .await()
                                .atMost(WAIT)
                                .bytes();
                    } catch (SyncError e) {
                        throw failure(e);
                    } catch (IOException e) {
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

    /** A transport straight into {@code engine} (segment downloads re-authorized for {@code project_id=p1}). */
    private SyncTestClient.Transport transport(SyncEngine engine) {
        return new EngineTransport(engine, partition, Map.of("project_id", List.of("p1")));
    }

    /** An image larger than the store takes is not published: that bootstrap (and later ones) page rows. */
    @Test
    void imagesAboveTheStoreCapFallBackToTheRowsLane() {
        server.allow("alice", Map.of("project_id", List.of("p1")));
        SyncTestClient writer = new SyncTestClient(SCHEMA, server.transport(), "alice", "cap-w")
                .subscribe("n", "notes", Map.of("project_id", List.of("p1")));
        List<PushOperation> ops = new ArrayList<>();
        for (int i = 0; i < 120; i++) {
            Map<String, Object> row = new HashMap<>();
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
        InMemorySegmentStore small = new InMemorySegmentStore(4096);
        SyncEngine capped = new SyncEngine(EngineParts.builder(
                        SchemaWindow.single(SCHEMA),
                        storage,
                        small,
                        (actor, p) -> Uni.createFrom().item(Map.of("project_id", List.of("p1"))))
                .build());
        SyncTestClient.Transport cappedTransport = transport(capped);
        for (int round = 0; round < 2; round++) {
            SyncTestClient b = new SyncTestClient(SCHEMA, cappedTransport, "bob", "cap-b" + round)
                    .subscribe("n", "notes", Map.of("project_id", List.of("p1")));
            b.accept = PullHeader.ACCEPT_EXTERNAL_ROWS | PullHeader.ACCEPT_SQLITE;
            b.limitSnapshotRows = 50;
            b.syncUntilIdle();
            Assertions.assertEquals(120, b.table("notes").size());
            Assertions.assertTrue(b.segmentRefs.size() >= 3);
            Assertions.assertTrue(b.segmentRefs.stream().allMatch(r -> r.mediaType() == MediaType.ROWS));
        }
    }

    /**
     * A commit of thousands of operations (the host raised the cap) applies without growing the stack per
     * operation: the suite runs with the production thread stack size (-Xss512k, pom.xml), where a recursive
     * walk over the operations overflowed at about a thousand.
     */
    @Test
    void hugeCommitsDoNotGrowTheStack() {
        server.allow("alice", Map.of("project_id", List.of("p1")));
        SyncEngine big = new SyncEngine(EngineParts.builder(
                        SchemaWindow.single(SCHEMA),
                        storage,
                        new InMemorySegmentStore(),
                        (actor, p) -> Uni.createFrom().item(Map.of("project_id", List.of("p1"))))
                .limits(new SyncLimits(
                        10_000, SyncLimits.DEFAULTS.inlineSegmentMaxBytes(), SyncLimits.DEFAULTS.segmentTtlMs()))
                .build());
        SyncTestClient.Transport transport = transport(big);
        SyncTestClient c = new SyncTestClient(SCHEMA, transport, "alice", "huge-1")
                .subscribe("n", "notes", Map.of("project_id", List.of("p1")));
        List<PushOperation> ops = new ArrayList<>();
        for (int i = 0; i < 5_000; i++) {
            Map<String, Object> row = new HashMap<>();
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
        Assertions.assertTrue(SyncTestClient.applied(c.result(id)));
        Assertions.assertEquals(5_000, server.rows("notes").size());
    }

    /**
     * §4.7 / §5.2: rows pages of thousands of rows are read in keyset batches of 10,000 and encoded as they
     * arrive — a page spanning batches, a page ending exactly on the table's last row, and the probe row
     * that tells a full page from the table's end all deliver every row once, with resume cursors between pages.
     */
    @Test
    void largePagesSpanningReadBatchesDeliverEveryRowOnce() {
        server.allow("alice", Map.of("project_id", List.of("p1")));
        SyncEngine big = new SyncEngine(EngineParts.builder(
                        SchemaWindow.single(SCHEMA),
                        storage,
                        new InMemorySegmentStore(),
                        (actor, p) -> Uni.createFrom().item(Map.of("project_id", List.of("p1"))))
                .limits(new SyncLimits(
                        25_000, SyncLimits.DEFAULTS.inlineSegmentMaxBytes(), SyncLimits.DEFAULTS.segmentTtlMs()))
                .build());
        SyncTestClient.Transport transport = transport(big);
        SyncTestClient writer = new SyncTestClient(SCHEMA, transport, "alice", "pages-w");
        List<PushOperation> ops = new ArrayList<>();
        for (int i = 0; i < 21_000; i++) {
            Map<String, Object> row = new HashMap<>();
            row.put("id", String.format(Locale.ROOT, "pg-%05d", i));
            row.put("project_id", "p1");
            row.put("title", "t" + i);
            row.put("body", null);
            row.put("priority", (long) i);
            row.put("done", false);
            ops.add(writer.upsertOp("notes", row, null));
        }
        String id = writer.commit(ops);
        writer.syncUntilIdle();
        Assertions.assertTrue(SyncTestClient.applied(writer.result(id)));
        // 15,000: pages of 10,000 + 5,001 (the probe) then 6,000 (exhausted); 10,500: the second page ends on
        // the last row (10,000 + 500 of 501 asked: complete, no resume cursor)
        for (int pageRows : new int[] {15_000, 10_500}) {
            SyncTestClient c = new SyncTestClient(SCHEMA, transport, "alice", "pages-" + pageRows)
                    .subscribe("n", "notes", Map.of("project_id", List.of("p1")));
            c.limitSnapshotRows = pageRows;
            c.maxSnapshotPages = 1;
            c.syncUntilIdle();
            Assertions.assertEquals(21_000, c.table("notes").size());
            Assertions.assertEquals(
                    List.of((long) pageRows, 21_000L - pageRows),
                    c.segmentRefs.stream().map(r -> r.rowCount()).toList(),
                    "one segment per page, every row once");
            Assertions.assertTrue(
                    Arrays.asList(c.table("notes").get("pg-20999").values()).contains("t20999"),
                    "the last row's values");
        }
    }

    /** §3.2 rule 3: one resolution per request, shared by its pushes (§3.4 step 1) and every subscription. */
    @Test
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
        Assertions.assertEquals(1, RESOLUTIONS.get());
        Assertions.assertEquals(2, c.results.size());
    }

    /**
     * §4.6: an incremental pull reads its window, then rechecks the horizon — here the request's exit read.
     * Pruning past the cursor after the entry read (the resolver runs between entry and window read) turns the
     * section into {@code reset} with no commits and the request cursor echoed, and the client record keeps
     * its cursor (a reset subscription is not active, §4.5).
     */
    @Test
    void pruningDuringAPullResetsTheSectionAtTheExitRead() {
        server.allow("alice", Map.of("project_id", List.of("p1")));
        SyncTestClient writer = new SyncTestClient(SCHEMA, server.transport(), "alice", "race-w")
                .subscribe("n", "notes", Map.of("project_id", List.of("p1")));
        writer.upsert("notes", note("r0", "p1", "t"), null);
        writer.syncUntilIdle();
        AtomicBoolean armed = new AtomicBoolean();
        SyncEngine racing = new SyncEngine(EngineParts.builder(
                        SchemaWindow.single(SCHEMA), storage, new InMemorySegmentStore(), (actor, p) -> {
                            Uni<Map<String, List<String>>> grant =
                                    Uni.createFrom().item(Map.of("project_id", List.of("p1")));
                            return !armed.getAndSet(false)
                                    ? grant
                                    : storage.readPartition(p)
                                            .flatMap(s -> storage.prune(p, s.logEpoch(), s.maxCommitSeq()))
                                            .flatMap(r -> grant);
                        })
                .build());
        SyncTestClient.Transport racingTransport = new EngineTransport(racing, partition, Map.of());
        SyncTestClient reader = new SyncTestClient(SCHEMA, racingTransport, "alice", "race-r")
                .subscribe("n", "notes", Map.of("project_id", List.of("p1")));
        reader.syncUntilIdle();
        long cursor = reader.subscriptions.get("n").cursor;
        Assertions.assertEquals(
                cursor,
                storage.readClient(partition, "race-r").await().atMost(WAIT).cursor());
        for (int i = 1; i <= 3; i++) {
            writer.upsert("notes", note("r" + i, "p1", "t"), null);
        }
        writer.syncUntilIdle();
        Assertions.assertTrue(server.maxCommitSeq() > cursor);
        armed.set(true);
        Message m = reader.sync();
        Assertions.assertFalse(armed.get(), "the resolver pruned during the request");
        SubStart start = (SubStart) m.frames().stream()
                .filter(f -> f instanceof SubStart)
                .findFirst()
                .orElseThrow();
        Assertions.assertEquals(SubscriptionStatus.RESET, start.status());
        Assertions.assertEquals("sync.cursor_expired", start.reasonCode());
        Assertions.assertTrue(m.frames().stream().noneMatch(f -> f instanceof CommitFrame));
        SubEnd end = (SubEnd)
                m.frames().stream().filter(f -> f instanceof SubEnd).findFirst().orElseThrow();
        Assertions.assertEquals(cursor, end.nextCursor(), "the request cursor is echoed");
        Assertions.assertEquals(
                cursor,
                storage.readClient(partition, "race-r").await().atMost(WAIT).cursor(),
                "a reset subscription does not advance the client record");
        reader.syncUntilIdle();
        Assertions.assertEquals(
                writer.table("notes").keySet(), reader.table("notes").keySet());
    }

    /**
     * §4.5 client record: a round that changes nothing it stores writes nothing (its update time is refreshed
     * only after {@link ClientRecords#CLIENT_RECORD_REFRESH_MS}); a forward cursor move is written once
     * {@link ClientRecords#CLIENT_CURSOR_REFRESH_MS} passed, new subscriptions at once.
     */
    @Test
    void unchangedRoundsDoNotRewriteTheClientRecord() {
        server.allow("alice", Map.of("project_id", List.of("p1", "p2")));
        long[] now = {1_000_000L};
        SyncEngine clocked = new SyncEngine(EngineParts.builder(
                        SchemaWindow.single(SCHEMA),
                        storage,
                        new InMemorySegmentStore(),
                        (actor, p) -> Uni.createFrom().item(Map.of("project_id", List.of("p1", "p2"))))
                .clock(() -> now[0])
                .build());
        SyncTestClient.Transport t = new EngineTransport(clocked, partition, Map.of());
        SyncTestClient c = new SyncTestClient(SCHEMA, t, "alice", "quiet-1")
                .subscribe("n", "notes", Map.of("project_id", List.of("p1")));
        c.syncUntilIdle();
        ClientRecord first = storage.readClient(partition, "quiet-1").await().atMost(WAIT);
        Assertions.assertNotNull(first);
        now[0] += 1_000;
        c.sync();
        Assertions.assertEquals(
                first, storage.readClient(partition, "quiet-1").await().atMost(WAIT), "nothing changed: no write");
        now[0] += ClientRecords.CLIENT_RECORD_REFRESH_MS;
        c.sync();
        ClientRecord refreshed =
                storage.readClient(partition, "quiet-1").await().atMost(WAIT);
        Assertions.assertEquals(now[0], refreshed.updatedAtMs(), "refreshed once stale");
        Assertions.assertEquals(first.cursor(), refreshed.cursor());
        now[0] += 1_000;
        c.upsert("notes", note("q1", "p1", "t"), null);
        c.sync();
        Assertions.assertEquals(
                refreshed,
                storage.readClient(partition, "quiet-1").await().atMost(WAIT),
                "a forward cursor move within CLIENT_CURSOR_REFRESH_MS of the last write is not written");
        now[0] += ClientRecords.CLIENT_CURSOR_REFRESH_MS;
        c.sync();
        ClientRecord moved = storage.readClient(partition, "quiet-1").await().atMost(WAIT);
        Assertions.assertTrue(moved.cursor() > first.cursor(), "a cursor move is written once due");
        Assertions.assertEquals(now[0], moved.updatedAtMs());
        now[0] += 1_000;
        c.subscribe("m", "notes", Map.of("project_id", List.of("p2")));
        c.syncUntilIdle();
        ClientRecord resubscribed =
                storage.readClient(partition, "quiet-1").await().atMost(WAIT);
        Assertions.assertEquals(now[0], resubscribed.updatedAtMs(), "new subscriptions are written");
        Assertions.assertTrue(resubscribed.subscriptionsJson().contains("\"m\""));
    }

    /**
     * §5.3 / issue #17: a SQLite image build that fails — here the segment store refuses the image file, as a
     * full disk or an unreachable bucket would — is logged, and the same bootstrap is served on the rows lane
     * at its pin: the pull succeeds with every row.
     */
    @Test
    void failedImageBuildFallsBackToTheRowsLane() {
        server.allow("alice", Map.of("project_id", List.of("p1")));
        InMemorySegmentStore real = new InMemorySegmentStore();
        SegmentStore refusingFiles = new SegmentStore() {
            @Override
            public Uni<Void> publish(String id, byte[] bytes, SegmentPublication p) {
                return real.publish(id, bytes, p);
            }

            @Override
            public Uni<Void> publishFile(String id, Path file, SegmentPublication p) {
                return Uni.createFrom().failure(new UncheckedIOException(new IOException("No space left on device")));
            }

            @Override
            public Uni<Match> find(ReuseKey key, long nowMs) {
                return real.find(key, nowMs);
            }

            @Override
            public Uni<StoredSegment> describe(String id) {
                return real.describe(id);
            }

            @Override
            public Uni<byte[]> read(String id) {
                return real.read(id);
            }

            @Override
            public Uni<Integer> deleteExpired(long nowMs) {
                return real.deleteExpired(nowMs);
            }

            @Override
            public Uni<SegmentStoreStats> stats(long nowMs) {
                return real.stats(nowMs);
            }
        };
        SyncEngine failing = new SyncEngine(EngineParts.builder(
                        SchemaWindow.single(SCHEMA),
                        storage,
                        refusingFiles,
                        (actor, p) -> Uni.createFrom().item(Map.of("project_id", List.of("p1"))))
                .build());
        SyncTestClient.Transport transport = transport(failing);
        SyncTestClient writer = new SyncTestClient(SCHEMA, transport, "alice", "img-fail-w");
        List<PushOperation> ops = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            ops.add(writer.upsertOp("notes", note("f-" + i, "p1", "t" + i), null));
        }
        String id = writer.commit(ops);
        writer.syncUntilIdle();
        Assertions.assertTrue(SyncTestClient.applied(writer.result(id)));

        List<LogRecord> logged = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord r) {
                logged.add(r);
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        Logger log = Logger.getLogger(SyncEngine.class.getName());
        log.addHandler(capture);
        try {
            SyncTestClient c = new SyncTestClient(SCHEMA, transport, "alice", "img-fail-c")
                    .subscribe("n", "notes", Map.of("project_id", List.of("p1")));
            c.accept = PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS | PullHeader.ACCEPT_SQLITE;
            c.limitSnapshotRows = 20;
            c.syncUntilIdle();
            Assertions.assertEquals(60, c.table("notes").size());
            Assertions.assertTrue(
                    c.segmentRefs.stream().noneMatch(r -> r.mediaType() == MediaType.SQLITE), "rows lane only");
        } finally {
            log.removeHandler(capture);
        }
        Assertions.assertTrue(
                logged.stream()
                        .anyMatch(r -> r.getLevel().intValue() >= Level.WARNING.intValue()
                                && String.valueOf(r.getMessage()).contains("SQLite image build failed")),
                "the failure is logged: "
                        + logged.stream().map(LogRecord::getMessage).toList());
    }
}
