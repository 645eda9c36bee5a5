package dev.syncular.server.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.testsupport.GeneratedCommits;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.PushLoad;
import dev.syncular.server.testsupport.ScratchSchemas;
import dev.syncular.server.testsupport.ServerProcess;
import dev.syncular.server.testsupport.StartsProcesses;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.CommitStatus;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A first prune of a long log while clients keep pushing to the same partition (§4.6; issue #17), on two
 * packaged servers whose pruning job runs every second. The 100,000 commits are made with SQL
 * ({@link GeneratedCommits}); the full-size run (one million) is {@code bench/prune.sh}. The prune moves the
 * horizon in one short transaction and deletes in batches outside the partition lock, so pushes to the partition
 * keep a bounded latency meanwhile; one pod runs the job while the other's attempts are skipped.
 */
@StartsProcesses
class PruneUnderLoadIT {
    private static final Duration WAIT = Duration.ofSeconds(180);
    private static final long GENERATED = 100_000;
    /** The bound on a push round's latency while the prune runs (a single-transaction prune holds the lock for seconds). */
    static final long MAX_ROUND_MS = 2_000;

    static ScratchSchemas scratch;
    static Pool pool;
    static String schemaName;
    static ServerProcess podA;
    static ServerProcess podB;

    static ServerProcess.Builder pod(String name) {
        return ServerProcess.builder("prune-under-load-" + name, schemaName).env("SYNCULAR_PRUNING_INTERVAL", "1s");
    }

    @BeforeAll
    static void start() throws Exception {
        scratch = ScratchSchemas.open(4);
        pool = scratch.pool;
        schemaName = scratch.fresh("it_prune_");
        podA = pod("a").start();
        podB = pod("b").start();
    }

    @AfterAll
    static void stop() throws Exception {
        ServerProcess.closeAll(podA, podB);
        scratch.close();
    }

    private static Row partition(String partition) {
        return pool.preparedQuery("SELECT horizon_seq, max_commit_seq, (SELECT count(*) FROM \"" + schemaName
                        + "\".sync_commits c"
                        + " WHERE c.partition_id = p.partition_id AND c.commit_seq <= p.horizon_seq) FROM \""
                        + schemaName
                        + "\".sync_partitions p WHERE partition_id = $1")
                .execute(Tuple.of(partition))
                .await()
                .atMost(WAIT)
                .iterator()
                .next();
    }

    @Test
    void aLongFirstPruneKeepsConcurrentPushesFast() throws Exception {
        CompiledSchema schema = SchemaLoader.parse(Files.readString(ServerProcess.BUNDLED_SCHEMA));
        String partition = "long-log-" + UUID.randomUUID();
        new SyncTestClient(schema, new HttpTransport(podA.baseUrl(), partition), "pruner", "c-register").sync();
        PushLoad load = new PushLoad(schema, partition, List.of(podA.baseUrl(), podB.baseUrl())).start(2);
        load.awaitMore(50, WAIT);
        long generatedTo = GeneratedCommits.append(pool, schemaName, partition, "todos", GENERATED);
        long generated = System.nanoTime();

        // the prune: the horizon moves first (one transaction), then the batches delete below it
        long deadline = System.nanoTime() + WAIT.toNanos();
        long started = 0;
        long finished = 0;
        while (finished == 0) {
            assertTrue(
                    System.nanoTime() < deadline,
                    "the prune did not finish: " + partition(partition).toJson());
            Row r = partition(partition);
            if (started == 0 && r.getLong(0) >= generatedTo - 1000) {
                started = System.nanoTime();
            }
            if (started != 0 && r.getLong(2) == 0) {
                finished = System.nanoTime();
            }
        }
        long pushesBefore = load.applied();
        load.awaitMore(50, WAIT);
        load.stop();

        // the window from the append's commit (the job's next pass is at most 1 s later) to the log deleted
        long during = load.roundsBetween(generated, finished);
        long p50 = load.percentileMs(50, generated, finished);
        long p99 = load.percentileMs(99, generated, finished);
        long max = load.percentileMs(100, generated, finished);
        System.out.printf(
                "prune of %,d commits: %d ms window (%d ms from the horizon seen moved); %d push rounds"
                        + " meanwhile, p50 %d ms, p99 %d ms, max %d ms%n",
                GENERATED, (finished - generated) / 1_000_000, (finished - started) / 1_000_000, during, p50, p99, max);
        assertTrue(during > 0, "pushes went on during the prune");
        assertTrue(max < MAX_ROUND_MS, "push rounds during the prune stayed under " + MAX_ROUND_MS + " ms: max " + max);
        assertTrue(pushesBefore > 0);

        // every pushed commit applied exactly once (its idempotency record; the log below the horizon is gone)
        load.results.forEach((id, statuses) -> assertEquals(List.of(CommitStatus.APPLIED), statuses, id));
        long results = pool.preparedQuery("SELECT count(*) FROM \"" + schemaName
                        + "\".sync_push_results WHERE partition_id = $1" + " AND client_commit_id LIKE 'load-%'")
                .execute(Tuple.of(partition))
                .await()
                .atMost(WAIT)
                .iterator()
                .next()
                .getLong(0);
        assertEquals(load.results.size(), results);

        // the big pass ran on one pod; the other pod's passes meanwhile were skipped
        Pattern big = Pattern.compile("pruning removed (\\d+) commits");
        int bigPasses = 0;
        for (ServerProcess p : new ServerProcess[] {podA, podB}) {
            Matcher m = big.matcher(p.log());
            while (m.find()) {
                if (Long.parseLong(m.group(1)) >= GENERATED - 1000) {
                    bigPasses++;
                }
            }
        }
        assertEquals(1, bigPasses, "one pod pruned the generated log, once");
    }
}
