package dev.syncular.server.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.jobs.Pruner.Pass;
import dev.syncular.server.storage.ClientRecord;
import dev.syncular.server.storage.PartitionState;
import dev.syncular.server.storage.PruneResult;
import dev.syncular.server.storage.PushOutcome;
import dev.syncular.server.storage.RetentionInputs;
import dev.syncular.server.storage.StoredCommit;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import dev.syncular.server.testsupport.GeneratedCommits;
import dev.syncular.server.testsupport.HeldTransaction;
import dev.syncular.server.testsupport.ScratchSchemas;
import dev.syncular.server.testsupport.TestPostgres;
import dev.syncular.server.wire.CommitStatus;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * §4.6 retention floors applied by the pruning pass, its bounded batches, and the §2.3 push-result retention, on
 * real PostgreSQL storage.
 */
class PrunerTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final long DAY = 24L * 60 * 60 * 1000;
    private static Vertx vertx;
    private static Pool pool;
    private static PostgresSyncStorage storage;

    @BeforeAll
    static void start() {
        vertx = Vertx.vertx();
        pool = TestPostgres.pool(vertx, 6);
        storage = new PostgresSyncStorage(
                pool,
                "sync_pruner_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10),
                new PostgresSyncStorage.Settings(
                        1000, Duration.ofSeconds(10), Duration.ofSeconds(30), 500, 2, 0, Duration.ofSeconds(60), 16));
        storage.ensureSchema(ScratchSchemas.ONE_TABLE).await().atMost(WAIT);
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

    private static void commits(String partition, int n) {
        for (int i = 0; i < n; i++) {
            storage.inPartitionTransaction(
                            partition,
                            tx -> tx.appendCommit(
                                    "a", "c", UUID.randomUUID().toString(), 1, List.of(), StoredCommit.UNTRACED))
                    .await()
                    .atMost(WAIT);
        }
    }

    @Test
    void activeCursorsAndTheNewestCommitsBoundTheHorizon() {
        long now = 100 * DAY;
        String p = "prune-" + UUID.randomUUID();
        storage.touchPartition(p, now).await().atMost(WAIT);
        commits(p, 30);
        storage.upsertClient(new ClientRecord(p, "active", "a", 12, now - DAY, null, 3, 1))
                .await()
                .atMost(WAIT);
        storage.upsertClient(new ClientRecord(p, "gone", "a", 3, now - 20 * DAY, null, 3, 1))
                .await()
                .atMost(WAIT);
        Pruner pruner = new Pruner(storage, new RetentionPolicy(Duration.ofDays(14), 10, Duration.ofDays(30)));
        pruner.pruneAll(now).await().atMost(WAIT);
        PartitionState s = storage.readPartition(p).await().atMost(WAIT);
        assertEquals(12, s.horizonSeq(), "held at the active client's cursor; the stale client does not count");
        storage.upsertClient(new ClientRecord(p, "active", "a", 30, now, null, 3, 1))
                .await()
                .atMost(WAIT);
        pruner.pruneAll(now).await().atMost(WAIT);
        assertEquals(20, storage.readPartition(p).await().atMost(WAIT).horizonSeq(), "the newest 10 commits stay");
    }

    @Test
    void policyNeverMovesBackwards() {
        RetentionPolicy policy = new RetentionPolicy(Duration.ofDays(14), 1000, Duration.ofDays(30));
        PartitionState s = new PartitionState("p", "e", 5000, 4500, 0, 0);
        assertEquals(-1, policy.pruneThrough(new RetentionInputs(s, 4000)));
        assertEquals(
                4000,
                policy.pruneThrough(new RetentionInputs(
                        new PartitionState("p", "e", 5000, 3000, 0, 0), RetentionInputs.NO_ACTIVE_CURSOR)));
    }

    /**
     * The retention inputs come from the database a page at a time: the lowest cursor of the active clients
     * (records moved within the window, cursor set), the stale and cursor-less ones left out.
     */
    @Test
    void retentionInputsAggregateTheActiveCursorsInTheDatabase() {
        long now = 100 * DAY;
        String p = "inputs-" + UUID.randomUUID();
        storage.touchPartition(p, now).await().atMost(WAIT);
        storage.upsertClient(new ClientRecord(p, "a", "a", 40, now - DAY, null, 3, 1))
                .await()
                .atMost(WAIT);
        storage.upsertClient(new ClientRecord(p, "b", "a", 25, now - 2 * DAY, null, 3, 1))
                .await()
                .atMost(WAIT);
        storage.upsertClient(new ClientRecord(p, "stale", "a", 3, now - 20 * DAY, null, 3, 1))
                .await()
                .atMost(WAIT);
        storage.upsertClient(new ClientRecord(p, "new", "a", -1, now, null, 3, 1))
                .await()
                .atMost(WAIT);
        String before = p.substring(0, p.length() - 1);
        RetentionInputs in = storage.retentionInputs(before, 1, now - 14 * DAY)
                .await()
                .atMost(WAIT)
                .get(0);
        assertEquals(p, in.partition().partition());
        assertEquals(25, in.lowestActiveCursor());
        String q = "inputs-none-" + UUID.randomUUID();
        storage.touchPartition(q, now).await().atMost(WAIT);
        assertEquals(
                RetentionInputs.NO_ACTIVE_CURSOR,
                storage.retentionInputs(q.substring(0, q.length() - 1), 1, now - 14 * DAY)
                        .await()
                        .atMost(WAIT)
                        .get(0)
                        .lowestActiveCursor());
    }

    /**
     * A pass pages through more partitions than fit one page ({@value Pruner#PAGE}) and prunes every one of them;
     * and a first prune of 10,000 batches (one sequence each) completes on the suite's thread stack size, the
     * chart's {@code -Xss512k} (pom.xml): batches are iterated, not chained.
     */
    @Test
    void aPassPagesThroughEveryPartitionAndIteratesTenThousandBatches() throws Exception {
        long now = 100 * DAY;
        String prefix = "paged-" + UUID.randomUUID().toString().substring(0, 8) + "-";
        int partitions = Pruner.PAGE + 20;
        String s = "\"" + storage.pgSchema() + "\".";
        // partitions with 12 commits each; keepNewest 10 lets each prune through seq 2
        pool.query("INSERT INTO " + s + "sync_partitions (partition_id, log_epoch, max_commit_seq, horizon_seq,"
                        + " created_at_ms, last_seen_at_ms) SELECT '" + prefix
                        + "' || lpad(g::text, 4, '0'), 'e', 12, 0, 0, 0"
                        + " FROM generate_series(1, " + partitions + ") g")
                .execute()
                .await()
                .atMost(WAIT);
        Pass pass = new Pruner(storage, new RetentionPolicy(Duration.ofDays(14), 10, Duration.ofDays(30)))
                .pruneAll(now)
                .await()
                .atMost(WAIT);
        assertEquals(
                0L,
                count("SELECT count(*) FROM " + s + "sync_partitions WHERE partition_id LIKE '" + prefix
                        + "%' AND horizon_seq <> 2"),
                "every partition of every page pruned through its bound");

        PostgresSyncStorage oneSeqBatches = new PostgresSyncStorage(
                pool,
                storage.pgSchema(),
                new PostgresSyncStorage.Settings(
                        1000, Duration.ofSeconds(10), Duration.ofSeconds(30), 1, 1000, 0, Duration.ofSeconds(60), 16));
        String p = "ten-thousand-" + UUID.randomUUID();
        oneSeqBatches.touchPartition(p, now).await().atMost(WAIT);
        assertEquals(10_001L, GeneratedCommits.append(pool, storage.pgSchema(), p, "t", 10_001));
        PruneResult r = oneSeqBatches
                .prune(p, oneSeqBatches.readPartition(p).await().atMost(WAIT).logEpoch(), 10_000)
                .await()
                .atMost(Duration.ofMinutes(5));
        assertEquals(10_000, r.horizonSeq());
        assertEquals(10_000L, r.removedCommits(), "10,000 batches of one sequence");
        assertEquals(1L, count("SELECT count(*) FROM " + s + "sync_commits WHERE partition_id = '" + p + "'"));
        assertTrue(pass.horizonLagCommits() >= 10, "the pass reports the lag it leaves: " + pass);
    }

    /**
     * A first prune of a long log: the horizon commits in its own short transaction, then the log is deleted in
     * batches of 500 sequences, each its own transaction, none under the partition lock. Shown by blocking one
     * batch (a row it must delete is locked): meanwhile the horizon and every earlier batch are committed, and a
     * push to the same partition goes through.
     */
    @Test
    void aFirstPruneDeletesInBatchesOutsideThePartitionLock() throws Exception {
        long now = 100 * DAY;
        String p = "batched-" + UUID.randomUUID();
        storage.touchPartition(p, now).await().atMost(WAIT);
        assertEquals(5000L, GeneratedCommits.append(pool, storage.pgSchema(), p, "t", 5000));
        String s = "\"" + storage.pgSchema() + "\".";
        CompletableFuture<Pruner.Pass> pruning;
        try (HeldTransaction blocker = HeldTransaction.begin(
                pool,
                "SELECT 1 FROM " + s + "sync_changes WHERE partition_id = '" + p
                        + "' AND commit_seq = 2600 FOR UPDATE")) {
            pruning = new Pruner(storage, new RetentionPolicy(Duration.ofDays(14), 10, Duration.ofDays(30)))
                    .pruneAll(now)
                    .subscribeAsCompletionStage();
            int prune = blocker.awaitBlocked();
            assertEquals(
                    4990, storage.readPartition(p).await().atMost(WAIT).horizonSeq(), "the horizon is committed first");
            assertEquals(
                    0L,
                    count("SELECT count(*) FROM " + s + "sync_commits WHERE partition_id = '" + p
                            + "' AND commit_seq <= 2500"),
                    "the batches before the blocked one are committed");
            assertEquals(2500L, count("SELECT count(*) FROM " + s + "sync_commits WHERE partition_id = '" + p + "'"));
            assertFalse(
                    blocker.relationLocks(prune, storage.pgSchema()).stream()
                            .anyMatch(l -> l.startsWith("sync_partitions")),
                    "the deleting batch holds no partition lock");
            assertEquals(
                    5001L,
                    storage.inPartitionTransaction(
                                    p,
                                    tx -> tx.appendCommit(
                                            "a", "c", "during-prune", now, List.of(), StoredCommit.UNTRACED))
                            .await()
                            .atMost(WAIT),
                    "a push to the partition is not held up by the prune");
            assertFalse(pruning.isDone());
        }
        Pruner.Pass pass = pruning.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertEquals(4990L, pass.commits());
        assertEquals(11L, count("SELECT count(*) FROM " + s + "sync_commits WHERE partition_id = '" + p + "'"));
        assertEquals(
                0L,
                count("SELECT count(*) FROM " + s + "sync_changes WHERE partition_id = '" + p
                        + "' AND commit_seq <= 4990"),
                "changes at or below the horizon are gone");
        assertEquals(
                0L,
                count("SELECT count(*) FROM " + s + "sync_commit_scopes WHERE partition_id = '" + p
                        + "' AND commit_seq <= 4990"),
                "scope-index entries at or below the horizon are gone");
    }

    /** §2.3: push results older than the retention are deleted in batches (2 per statement here); newer ones stay. */
    @Test
    void pushResultsOlderThanTheRetentionArePruned() {
        long now = 100 * DAY;
        String p = "results-" + UUID.randomUUID();
        storage.touchPartition(p, now).await().atMost(WAIT);
        for (int i = 0; i < 7; i++) {
            long created = i < 5 ? now - 31 * DAY : now - 29 * DAY;
            String id = "cc-" + i;
            storage.inPartitionTransaction(
                            p,
                            tx -> tx.savePushResult(
                                    "client",
                                    id,
                                    new PushOutcome(CommitStatus.REJECTED, null, new byte[] {1}, created)))
                    .await()
                    .atMost(WAIT);
        }
        Pruner.Pass pass = new Pruner(storage, new RetentionPolicy(Duration.ofDays(14), 1000, Duration.ofDays(30)))
                .pruneAll(now)
                .await()
                .atMost(WAIT);
        assertEquals(5L, pass.pushResults());
        assertNull(storage.findPushResult(p, "client", "cc-0").await().atMost(WAIT), "older than 30 days: gone");
        assertNotNull(storage.findPushResult(p, "client", "cc-5").await().atMost(WAIT), "29 days old: kept");
        assertNotNull(storage.findPushResult(p, "client", "cc-6").await().atMost(WAIT));
    }

    private static long count(String sql) {
        return pool.query(sql).execute().await().atMost(WAIT).iterator().next().getLong(0);
    }
}
