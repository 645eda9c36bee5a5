package dev.syncular.server.storage.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.StoredCommit;
import dev.syncular.server.testsupport.HeldTransaction;
import dev.syncular.server.testsupport.ScratchSchemas;
import dev.syncular.server.testsupport.TestPostgres;
import io.vertx.mutiny.pgclient.PgBuilder;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.PoolOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The bounds of a partition transaction (§6.4; issue #17): a bounded in-process queue per partition, and
 * {@code lock_timeout} / {@code statement_timeout} set in every group transaction. Each refusal is
 * {@code sync.storage.busy} with a reason and {@code retryAfterMs} (the HTTP binding answers it 429
 * {@code sync.rate_limited} with {@code Retry-After}), and leaves nothing written.
 */
class PartitionTransactionLimitsTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final CompiledSchema SCHEMA = ScratchSchemas.ONE_TABLE;

    @RegisterExtension
    static final ScratchSchemas scratch = ScratchSchemas.open(8);

    private static final Pool pool = scratch.pool;

    private static PostgresSyncStorage storage(PostgresSyncStorage.Settings settings, String partition) {
        String s = scratch.fresh("sync_limits_");
        PostgresSyncStorage storage = new PostgresSyncStorage(pool, s, settings);
        storage.ensureSchema(SCHEMA).await().atMost(WAIT);
        storage.touchPartition(partition, 1L).await().atMost(WAIT);
        return storage;
    }

    private static CompletableFuture<Long> append(PostgresSyncStorage storage, String partition) {
        return storage.inPartitionTransaction(
                        partition,
                        tx -> tx.appendCommit(
                                "a", "c", UUID.randomUUID().toString(), 1L, List.of(), StoredCommit.UNTRACED))
                .subscribeAsCompletionStage();
    }

    private static StorageException busy(CompletableFuture<?> f) throws InterruptedException, TimeoutException {
        try {
            f.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            StorageException se = assertInstanceOf(StorageException.class, e.getCause());
            assertEquals(StorageException.BUSY, se.code());
            assertEquals(PgSql.RETRY_AFTER_MS, se.details().get("retryAfterMs"));
            return se;
        }
        throw new AssertionError("expected sync.storage.busy");
    }

    private static String lockPartition(PostgresSyncStorage storage, String partition) {
        return "SELECT 1 FROM \"" + storage.pgSchema() + "\".sync_partitions WHERE partition_id = '" + partition
                + "' FOR UPDATE";
    }

    /** A push that waits longer than lock_timeout for its partition is rolled back: busy, nothing appended. */
    @Test
    void aLockWaitLongerThanTheLockTimeoutIsBusy() throws Exception {
        PostgresSyncStorage storage = storage(
                new PostgresSyncStorage.Settings(
                        10, Duration.ofMillis(300), Duration.ZERO, 100, 100, 0, Duration.ofSeconds(60), 16),
                "p");
        try (HeldTransaction other = HeldTransaction.begin(pool, lockPartition(storage, "p"))) {
            assertEquals("lock_timeout", busy(append(storage, "p")).details().get("reason"));
        }
        assertEquals(0L, storage.readPartition("p").await().atMost(WAIT).maxCommitSeq(), "nothing was written");
        assertEquals(1L, append(storage, "p").get(WAIT.toSeconds(), TimeUnit.SECONDS), "the retry applies");
    }

    /** Without a lock timeout, the statement timeout ends the same wait. */
    @Test
    void aStatementLongerThanTheStatementTimeoutIsBusy() throws Exception {
        PostgresSyncStorage storage = storage(
                new PostgresSyncStorage.Settings(
                        10, Duration.ZERO, Duration.ofMillis(300), 100, 100, 0, Duration.ofSeconds(60), 16),
                "p");
        try (HeldTransaction other = HeldTransaction.begin(pool, lockPartition(storage, "p"))) {
            assertEquals(
                    "statement_timeout", busy(append(storage, "p")).details().get("reason"));
        }
        assertEquals(0L, storage.readPartition("p").await().atMost(WAIT).maxCommitSeq());
    }

    /**
     * At most {@code maxQueuedPerPartition} works wait in a partition's queue: while the first holds the drain
     * (waiting for the partition lock), two more queue and the fourth is refused at once; the others apply once
     * the lock is free.
     */
    @Test
    void aFullPartitionQueueRefusesAtOnce() throws Exception {
        PostgresSyncStorage storage = storage(
                new PostgresSyncStorage.Settings(
                        2, Duration.ofSeconds(30), Duration.ofSeconds(30), 100, 100, 0, Duration.ofSeconds(60), 16),
                "p");
        List<CompletableFuture<Long>> accepted = new ArrayList<>();
        try (HeldTransaction other = HeldTransaction.begin(pool, lockPartition(storage, "p"))) {
            accepted.add(append(storage, "p"));
            other.awaitBlocked(); // the first group waits for the lock; the queue is empty again
            accepted.add(append(storage, "p"));
            accepted.add(append(storage, "p"));
            CompletableFuture<Long> refused = append(storage, "p");
            assertTrue(refused.isDone(), "refused without waiting");
            assertEquals("queue_full", busy(refused).details().get("reason"));
            assertFalse(accepted.get(0).isDone());
        }
        List<Long> seqs = new ArrayList<>();
        for (CompletableFuture<Long> f : accepted) {
            seqs.add(f.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        }
        assertEquals(List.of(1L, 2L, 3L), seqs);
    }

    /**
     * The group transaction states READ COMMITTED, whatever the database's default: on connections whose default
     * is REPEATABLE READ, a push that waited for the partition row while its holder updated it still proceeds
     * (under REPEATABLE READ its {@code FOR UPDATE} would fail with a serialization error), and reads the row as
     * the holder committed it.
     */
    @Test
    void theGroupTransactionStatesReadCommitted() throws Exception {
        PgConnectOptions options = PgConnectOptions.fromUri(TestPostgres.url())
                .setUser(TestPostgres.user())
                .setPassword(TestPostgres.password());
        options.addProperty("default_transaction_isolation", "repeatable read");
        Pool repeatableRead = PgBuilder.pool()
                .with(new PoolOptions().setMaxSize(2))
                .connectingTo(options)
                .using(scratch.vertx)
                .build();
        try {
            PostgresSyncStorage setup = storage(PostgresSyncStorage.Settings.DEFAULTS, "p");
            PostgresSyncStorage storage =
                    new PostgresSyncStorage(repeatableRead, setup.pgSchema(), PostgresSyncStorage.Settings.DEFAULTS);
            storage.ensureSchema(SCHEMA).await().atMost(WAIT);
            CompletableFuture<Long> waiting;
            try (HeldTransaction holder = HeldTransaction.begin(pool, lockPartition(storage, "p"))) {
                waiting = append(storage, "p");
                holder.awaitBlocked();
                holder.execute("UPDATE \"" + storage.pgSchema()
                        + "\".sync_partitions SET max_commit_seq = 41 WHERE partition_id = 'p'");
                holder.commit();
            }
            assertEquals(42L, waiting.get(WAIT.toSeconds(), TimeUnit.SECONDS), "the push saw the committed row");
        } finally {
            repeatableRead.close().await().atMost(WAIT);
        }
    }
}
