package dev.syncular.server.storage.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.jobs.Pruner;
import dev.syncular.server.jobs.RetentionPolicy;
import dev.syncular.server.storage.LogRepartitioning;
import dev.syncular.server.storage.PartitionState;
import dev.syncular.server.storage.StoredCommit;
import dev.syncular.server.testsupport.GeneratedCommits;
import dev.syncular.server.testsupport.ScratchSchemas;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The online move of a populated plain commit log to hash partitions ({@link LogRepartition}, docs/SCALING.md
 * "Partitioning the commit log"), on real PostgreSQL, while a writer keeps appending commits through the push path
 * and the pruning pass deletes below the §4.6 horizon: afterwards every table of the log holds exactly the commits
 * above each partition's horizon (none lost, none duplicated, no pruned row back), the writer never failed, the
 * start-up DDL finds every object it checks, and the §2.4 writer fence still guards appends.
 */
class LogRepartitionTest {
    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final PostgresSyncStorage.Settings PLAIN_LOG = new PostgresSyncStorage.Settings(
            1000, Duration.ofSeconds(10), Duration.ofSeconds(30), 100, 1000, 0, Duration.ofSeconds(60), 0);
    private static final int PARTITIONS = 12;
    private static final long GENERATED = 400;

    @RegisterExtension
    static final ScratchSchemas scratch = ScratchSchemas.open(8);

    private static final Pool pool = scratch.pool;

    /** A plain-layout storage in a fresh schema, {@link #GENERATED} commits (one change each) in each partition. */
    private static PostgresSyncStorage populated(String prefix) {
        PostgresSyncStorage storage = new PostgresSyncStorage(pool, scratch.fresh(prefix), PLAIN_LOG);
        storage.ensureSchema(ScratchSchemas.ONE_TABLE).await().atMost(WAIT);
        for (int i = 0; i < PARTITIONS; i++) {
            storage.touchPartition(partition(i), 0).await().atMost(WAIT);
            assertEquals(GENERATED, GeneratedCommits.append(pool, storage.pgSchema(), partition(i), "t", GENERATED));
        }
        return storage;
    }

    private static String partition(int i) {
        return "tenant-" + (i < 10 ? "0" : "") + i;
    }

    private static long count(String sql) {
        return pool.query(sql).execute().await().atMost(WAIT).iterator().next().getLong(0);
    }

    @Test
    void aPopulatedLogMovesWhilePushesAndPrunesGoOn() throws Exception {
        PostgresSyncStorage storage = populated("sync_move_");
        LogRepartitioning move = storage.logRepartitioning();
        assertEquals(
                new LogRepartitioning.Layout(0, false), move.layout().await().atMost(WAIT));

        // a writer appends through the push path to every partition, before, during and after the swap
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger appended = new AtomicInteger();
        CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
            for (int n = 0; !stop.get() || n < 2 * PARTITIONS; n++) {
                storage.inPartitionTransaction(
                                partition(n % PARTITIONS),
                                tx -> tx.appendCommit(
                                        "a", "c", UUID.randomUUID().toString(), 1, List.of(), StoredCommit.UNTRACED))
                        .await()
                        .atMost(WAIT);
                appended.incrementAndGet();
            }
        });
        // the pruning pass runs while the copy runs: the newest 100 commits of each partition stay
        Pruner pruner = new Pruner(storage, new RetentionPolicy(Duration.ofDays(14), 100, Duration.ofDays(30)));
        List<String> progress = new ArrayList<>();
        CompletableFuture<LogRepartitioning.Report> moved = move.repartition(16, 150, m -> {
                    synchronized (progress) {
                        if (progress.size() == 3) {
                            pruner.pruneAll(System.currentTimeMillis()).subscribeAsCompletionStage();
                        }
                        progress.add(m);
                    }
                })
                .subscribeAsCompletionStage();
        LogRepartitioning.Report report = moved.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        // one more pass after the swap, on the new tables
        pruner.pruneAll(System.currentTimeMillis()).await().atMost(WAIT);
        stop.set(true);
        writer.get(WAIT.toSeconds(), TimeUnit.SECONDS);

        assertEquals(0, report.leavesBefore());
        assertEquals(16, report.leavesAfter());
        assertTrue(report.rowsCopied() >= 3 * PARTITIONS * 100L, "rows copied: " + report);
        assertEquals(
                new LogRepartitioning.Layout(16, false), move.layout().await().atMost(WAIT));
        assertTrue(appended.get() > 2 * PARTITIONS, "the writer appended " + appended.get());
        assertExactLog(storage);

        // a restarted pod: the start-up DDL finds every object, a second move has nothing to do
        storage.ensureSchema(ScratchSchemas.ONE_TABLE).await().atMost(WAIT);
        assertEquals(
                new LogRepartitioning.Report(16, 16, 0),
                move.repartition(16, 150, m -> {}).await().atMost(WAIT));
        String s = PgSql.q(storage.pgSchema());
        assertEquals(
                3L,
                count("SELECT count(*) FROM pg_partitioned_table WHERE partrelid IN ('" + s
                        + ".sync_commits'::regclass," + " '" + s + ".sync_changes'::regclass, '" + s
                        + ".sync_commit_scopes'::regclass)"));
        assertEquals(
                4L,
                count(
                        "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '"
                                + storage.pgSchema() + "' AND c.relname IN ('sync_commits_pkey', 'sync_changes_pkey',"
                                + " 'sync_commit_scopes_pkey', 'sync_commit_scopes_by_seq')"),
                "the index names the start-up DDL checks");
        assertEquals(
                0L,
                count(
                        "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '"
                                + storage.pgSchema()
                                + "' AND (c.relname LIKE '%\\_next%' OR c.relname = 'sync_log_repartition')"),
                "no copy or progress table is left");

        // §2.4 the writer fence guards the new sync_commits: an append below the required version is refused
        pool.query("INSERT INTO " + s + ".sync_writer_fence VALUES ('" + partition(0) + "', 99)")
                .execute()
                .await()
                .atMost(WAIT);
        io.vertx.pgclient.PgException fenced = assertThrows(
                io.vertx.pgclient.PgException.class,
                () -> pool.query(
                                "INSERT INTO " + s + ".sync_commits (partition_id, commit_seq, created_at_ms, actor_id,"
                                        + " client_id, client_commit_id, change_count, tables, writer_version) VALUES ('"
                                        + partition(0) + "', 1000000, 1, 'a', 'c', 'raw', 0, '{}', 1)")
                        .execute()
                        .await()
                        .atMost(WAIT));
        assertEquals(CheckpointStore.FENCE_SQLSTATE, fenced.getSqlState(), "the trigger on the new table refuses it");
    }

    /** A move that stopped during its copy is resumed by running it again, from the stored cursors. */
    @Test
    void anInterruptedMoveResumes() {
        PostgresSyncStorage storage = populated("sync_resume_");
        LogRepartitioning move = storage.logRepartitioning();
        AtomicInteger batches = new AtomicInteger();
        assertThrows(
                IllegalStateException.class,
                () -> move.repartition(8, 200, m -> {
                            if (batches.incrementAndGet() == 5) {
                                throw new IllegalStateException("the command's pod stopped");
                            }
                        })
                        .await()
                        .atMost(WAIT));
        assertEquals(
                new LogRepartitioning.Layout(0, true), move.layout().await().atMost(WAIT));
        String s = PgSql.q(storage.pgSchema());
        long copiedBefore = count("SELECT sum(copied) FROM " + s + ".sync_log_repartition");
        assertTrue(copiedBefore > 0 && copiedBefore < PARTITIONS * GENERATED, "copied before: " + copiedBefore);
        // appends go on between the two runs: the triggers copy them
        storage.inPartitionTransaction(
                        partition(3), tx -> tx.appendCommit("a", "c", "between", 1, List.of(), StoredCommit.UNTRACED))
                .await()
                .atMost(WAIT);
        // run again asking for 16: the copy the first run made keeps its 8 leaves
        LogRepartitioning.Report report =
                move.repartition(16, 200, m -> {}).await().atMost(WAIT);
        assertEquals(8, report.leavesAfter());
        assertTrue(
                report.rowsCopied() < 3 * PARTITIONS * GENERATED,
                "the second run starts at the stored cursors: " + report);
        assertExactLog(storage);
    }

    /**
     * Every partition's log, in each of the three tables, is exactly the seqs above its horizon (the generated
     * commits each with one change and one scope entry; the appended ones without).
     */
    private static void assertExactLog(PostgresSyncStorage storage) {
        String s = PgSql.q(storage.pgSchema());
        for (int i = 0; i < PARTITIONS; i++) {
            String p = partition(i);
            PartitionState state = storage.readPartition(p).await().atMost(WAIT);
            long horizon = state.horizonSeq();
            long max = state.maxCommitSeq();
            Row commits = pool.preparedQuery(
                            "SELECT count(*), count(DISTINCT commit_seq), min(commit_seq), max(commit_seq)" + " FROM "
                                    + s + ".sync_commits WHERE partition_id = $1")
                    .execute(Tuple.of(p))
                    .await()
                    .atMost(WAIT)
                    .iterator()
                    .next();
            assertEquals(max - horizon, commits.getLong(0), p + " holds every commit above its horizon once");
            assertEquals(max - horizon, commits.getLong(1), p);
            if (max > horizon) {
                assertEquals(horizon + 1, commits.getLong(2), p + ": no pruned commit came back");
                assertEquals(max, commits.getLong(3), p);
            }
            long generatedAbove = Math.max(0, GENERATED - horizon);
            for (String table : List.of("sync_changes", "sync_commit_scopes")) {
                assertEquals(
                        generatedAbove,
                        count("SELECT count(*) FROM " + s + "." + table + " WHERE partition_id = '" + p + "'"),
                        p + " " + table);
                assertEquals(
                        0L,
                        count("SELECT count(*) FROM " + s + "." + table + " WHERE partition_id = '" + p
                                + "' AND commit_seq <= " + horizon),
                        p + " " + table + ": nothing at or below the horizon");
            }
        }
    }
}
