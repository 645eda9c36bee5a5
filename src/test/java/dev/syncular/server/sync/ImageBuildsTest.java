package dev.syncular.server.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.segments.memory.InMemorySegmentStore;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import dev.syncular.server.testsupport.EngineTransport;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestPostgres;
import dev.syncular.server.wire.MediaType;
import dev.syncular.server.wire.PullHeader;
import dev.syncular.server.wire.PushOperation;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * §5.3 image builds per partition (issue 45, {@link ImageBuilds#perPartition()}): while a partition's build runs, its
 * further cold bootstraps of other scopes take the rows lane at once (counted as deferred) instead of queueing behind
 * it; a bootstrap of the same table and scopes joins the running build; another partition's build is started. The
 * builds run on the executor the parts name (the pod's own pool in the application), here one the test releases.
 */
class ImageBuildsTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static Vertx vertx;
    private static Pool pool;
    private static PostgresSyncStorage storage;

    /** Holds the tasks given to it until {@link #release}; then runs them and every later one on a thread of its own. */
    static final class Held implements Executor {
        final ConcurrentLinkedQueue<Runnable> waiting = new ConcurrentLinkedQueue<>();
        volatile boolean released;

        @Override
        public void execute(Runnable task) {
            if (released) {
                new Thread(task, "image-build").start();
            } else {
                waiting.add(task);
            }
        }

        void release() {
            released = true;
            for (Runnable r; (r = waiting.poll()) != null; ) {
                new Thread(r, "image-build").start();
            }
        }
    }

    @BeforeAll
    static void start() {
        vertx = Vertx.vertx();
        pool = TestPostgres.pool(vertx, 6);
        storage = new PostgresSyncStorage(
                pool,
                "sync_imgbuilds_"
                        + UUID.randomUUID().toString().replace("-", "").substring(0, 10),
                PostgresSyncStorage.Settings.DEFAULTS);
        storage.ensureSchema(SyncScenariosContract.SCHEMA).await().atMost(WAIT);
    }

    @AfterAll
    static void stop() {
        pool.query("DROP SCHEMA IF EXISTS \"" + storage.pgSchema() + "\" CASCADE")
                .execute()
                .await()
                .atMost(WAIT);
        pool.close().await().atMost(WAIT);
        vertx.close().await().atMost(WAIT);
    }

    private static SyncTestClient client(SyncEngine engine, String partition, String project) {
        SyncTestClient c = new SyncTestClient(
                        SyncScenariosContract.SCHEMA,
                        new EngineTransport(engine, partition, Map.of("project_id", List.of(project))),
                        "alice",
                        "c-" + UUID.randomUUID())
                .subscribe("n", "notes", Map.of("project_id", List.of(project)));
        c.accept = PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS | PullHeader.ACCEPT_SQLITE;
        c.limitSnapshotRows = 10;
        return c;
    }

    private static void seed(SyncEngine engine, String partition) {
        SyncTestClient writer = client(engine, partition, "w");
        writer.syncUntilIdle();
        List<PushOperation> ops = new ArrayList<>();
        for (String project : List.of("p1", "p2")) {
            for (int i = 0; i < 30; i++) {
                ops.add(writer.upsertOp(
                        "notes", SyncScenariosContract.note(project + "-" + i, project, "title " + i), null));
            }
        }
        writer.commit(ops);
        writer.syncUntilIdle();
    }

    private static boolean image(SyncTestClient c) {
        return c.segmentRefs.stream().anyMatch(r -> r.mediaType() == MediaType.SQLITE);
    }

    @Test
    void aPartitionsSecondColdBuildTakesTheRowsLaneWhileOthersBuild() throws Exception {
        Held executor = new Held();
        AtomicInteger deferred = new AtomicInteger();
        ScopeResolver everything = (actor, p) -> Uni.createFrom().item(Map.of("project_id", List.of("*")));
        SyncEngine engine = new SyncEngine(EngineParts.builder(
                        SchemaWindow.single(SyncScenariosContract.SCHEMA),
                        storage,
                        new InMemorySegmentStore(),
                        everything)
                .images(new ImageBuilds(true, executor, 1))
                .observer(new SyncObserver() {
                    @Override
                    public void imageBuildDeferred() {
                        deferred.incrementAndGet();
                    }
                })
                .build());
        String loud = "loud-" + UUID.randomUUID();
        String other = "other-" + UUID.randomUUID();
        seed(engine, loud);
        seed(engine, other);

        SyncTestClient first = client(engine, loud, "p1");
        first.sync(); // the log epoch
        CompletableFuture<Void> building = CompletableFuture.runAsync(first::syncUntilIdle);
        awaitWaiting(executor, 1);

        // the same partition, other scopes: no second build of the partition, served on the rows lane at once
        SyncTestClient second = client(engine, loud, "p2");
        second.syncUntilIdle();
        assertEquals(30, second.table("notes").size());
        assertTrue(!image(second), "rows lane: " + second.segmentRefs);
        assertEquals(1, deferred.get());

        // another partition builds (queued on the pod's pool); the same table and scopes join the running build
        SyncTestClient elsewhere = client(engine, other, "p1");
        elsewhere.sync();
        CompletableFuture<Void> otherBuild = CompletableFuture.runAsync(elsewhere::syncUntilIdle);
        awaitWaiting(executor, 2);
        SyncTestClient joiner = client(engine, loud, "p1");
        joiner.sync();
        CompletableFuture<Void> joined = CompletableFuture.runAsync(joiner::syncUntilIdle);

        executor.release();
        building.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        otherBuild.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        joined.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        for (SyncTestClient c : List.of(first, elsewhere, joiner)) {
            assertEquals(30, c.table("notes").size());
            assertTrue(image(c), "served by an image: " + c.segmentRefs);
        }
        assertEquals(1, deferred.get(), "the joiner and the other partition were not deferred");
    }

    /** Polls (with a deadline) until {@code n} builds wait on the held executor. */
    private static void awaitWaiting(Held executor, int n) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (executor.waiting.size() < n) {
            assertTrue(System.nanoTime() < deadline, "builds waiting: " + executor.waiting.size() + " of " + n);
            Thread.onSpinWait();
        }
    }
}
