package dev.syncular.server.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.segments.memory.InMemorySegmentStore;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import dev.syncular.server.testsupport.EngineTransport;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestPostgres;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.SegmentInline;
import dev.syncular.server.wire.SegmentRef;
import dev.syncular.server.wire.SubEnd;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The pod-wide memory of planned responses (issue 44, hole 2; {@link ResponseMemory}): every planned data frame's
 * bytes are taken from it while the round runs and given back when it ends; once the pod holds more than it allows,
 * the round's response stops growing as if its own §1.4 budget were spent — a bootstrap ends after the page that
 * passed it with its resume token — and the client's next rounds converge. Before, a round planned up to its own
 * 8 MiB whatever every other round held.
 */
class ResponseMemoryTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static Vertx vertx;
    private static Pool pool;
    private static PostgresSyncStorage storage;

    /** A pod memory of {@code limit} bytes that records what it holds and the most it ever held. */
    static final class Counted implements ResponseMemory {
        final long limit;
        final AtomicLong held = new AtomicLong();
        final AtomicLong peak = new AtomicLong();

        Counted(long limit) {
            this.limit = limit;
        }

        @Override
        public boolean take(long bytes) {
            long now = held.addAndGet(bytes);
            peak.accumulateAndGet(now, Math::max);
            return now <= limit;
        }

        @Override
        public void give(long bytes) {
            held.addAndGet(-bytes);
        }
    }

    @BeforeAll
    static void start() {
        vertx = Vertx.vertx();
        pool = TestPostgres.pool(vertx, 4);
        storage = new PostgresSyncStorage(
                pool,
                "sync_respmem_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10),
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

    static SyncTestClient client(SyncEngine engine, String partition, String actor) {
        return new SyncTestClient(
                SyncScenariosContract.SCHEMA,
                new EngineTransport(engine, partition, Map.of("project_id", List.of("p1"))),
                actor,
                "c-" + UUID.randomUUID());
    }

    static SyncEngine engine(ResponseMemory memory) {
        ScopeResolver everything = (actor, p) -> Uni.createFrom().item(Map.of("project_id", List.of("*")));
        return new SyncEngine(EngineParts.builder(
                        SchemaWindow.single(SyncScenariosContract.SCHEMA),
                        storage,
                        new InMemorySegmentStore(),
                        everything)
                .memory(memory)
                .build());
    }

    @Test
    void aPodOverItsMemoryEndsResponsesEarlyAndRoundsStillConverge() {
        String partition = "p-" + UUID.randomUUID();
        SyncTestClient writer = client(engine(ResponseMemory.NONE), partition, "writer")
                .subscribe("w", "notes", Map.of("project_id", List.of("w")));
        writer.syncUntilIdle();
        List<dev.syncular.server.wire.PushOperation> ops = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            Map<String, Object> n = SyncScenariosContract.note(String.format("n%03d", i), "p1", "title " + i);
            n.put("body", "b".repeat(1000));
            ops.add(writer.upsertOp("notes", n, null));
        }
        writer.commit(ops);
        writer.syncUntilIdle();

        // unlimited: the whole scope in one round (200 KB, far below the 8 MiB §1.4 budget)
        Counted roomy = new Counted(Long.MAX_VALUE);
        SyncTestClient all = client(engine(roomy), partition, "alice");
        all.limitSnapshotRows = 20;
        all.maxSnapshotPages = 50;
        all.subscribe("s", "notes", Map.of("project_id", List.of("p1")));
        all.sync(); // the log epoch
        assertEquals(10, pages(all.sync()), "ten pages of 20 rows in one round");
        assertEquals(200, all.table("notes").size());
        assertEquals(0, roomy.held.get(), "every byte given back when the round ended");

        // 30 KB of pod memory: the round ends after the page that passed it, with its resume token
        Counted tight = new Counted(30_000);
        SyncTestClient c = client(engine(tight), partition, "bob");
        c.limitSnapshotRows = 20;
        c.maxSnapshotPages = 50;
        c.subscribe("s", "notes", Map.of("project_id", List.of("p1")));
        c.sync(); // the log epoch
        Message m = c.sync();
        long pages = pages(m);
        assertTrue(pages >= 1 && pages < 10, "stopped at the pod's memory: " + pages + " pages");
        SubEnd end = (SubEnd)
                m.frames().stream().filter(f -> f instanceof SubEnd).findFirst().orElseThrow();
        assertNotNull(end.bootstrapState(), "the bootstrap keeps going next round");
        assertEquals(0, tight.held.get(), "given back when the round ended");
        c.syncUntilIdle();
        assertEquals(200, c.table("notes").size(), "the rounds converge");
        assertTrue(roomy.peak.get() > 200_000, "unlimited, one round held the whole scope: " + roomy.peak.get());
        assertTrue(
                tight.peak.get() < 3 * tight.limit,
                "held at most the limit and the pages planned while it was passed: " + tight.peak.get());
    }

    private static long pages(Message m) {
        long n = 0;
        for (Frame f : m.frames()) {
            if (f instanceof SegmentInline || f instanceof SegmentRef) {
                n++;
            }
        }
        return n;
    }
}
