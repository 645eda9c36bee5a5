package dev.syncular.server.storage.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.blobs.postgres.PostgresBlobStore;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.segments.postgres.PostgresSegmentStore;
import dev.syncular.server.testsupport.HeldTransaction;
import dev.syncular.server.testsupport.ScratchSchemas;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Start-up DDL on a busy database (§2.4 storage readiness; issue #17): a boot reads the catalog and runs DDL
 * only for what is missing, under {@code lock_timeout}, so a rolling deploy does not stall the pushes of every
 * pod. "Busy" is a transaction holding ROW EXCLUSIVE on every table, as in-flight pushes do: it conflicts with
 * {@code CREATE INDEX} (SHARE), {@code CREATE TRIGGER} (SHARE ROW EXCLUSIVE) and {@code ALTER TABLE} (ACCESS
 * EXCLUSIVE), even when {@code IF NOT EXISTS} finds the object.
 */
class StartupDdlTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final CompiledSchema SCHEMA = ScratchSchemas.ONE_TABLE;

    @RegisterExtension
    static final ScratchSchemas scratch = ScratchSchemas.open(6);

    private static final Pool pool = scratch.pool;

    private static final PostgresSyncStorage.Settings PLAIN_LOG = new PostgresSyncStorage.Settings(
            1000, Duration.ofSeconds(10), Duration.ofSeconds(30), 2000, 1000, 8L << 20, Duration.ofSeconds(60), 0);

    private static String freshSchema() {
        return scratch.fresh("sync_ddl_");
    }

    /** Every store's start-up DDL on {@code pgSchema}, as the server runs it. */
    private static Uni<Void> boot(String pgSchema) {
        return new PostgresSyncStorage(pool, pgSchema, PostgresSyncStorage.Settings.DEFAULTS)
                .ensureSchema(SCHEMA)
                .chain(() -> new PostgresSegmentStore(pool, pgSchema, PostgresSegmentStore.DEFAULT_CACHE_BYTES)
                        .ensureSchema())
                .chain(() -> new PostgresBlobStore(pool, pgSchema).ensureSchema());
    }

    private static String busyTables(String pgSchema) {
        List<String> tables = new ArrayList<>();
        for (Row r : pool.preparedQuery("SELECT quote_ident(table_schema) || '.' || quote_ident(table_name)"
                        + " FROM information_schema.tables WHERE table_schema = $1")
                .execute(Tuple.of(pgSchema))
                .await()
                .atMost(WAIT)) {
            tables.add(r.getString(0));
        }
        assertTrue(tables.size() >= 15, "every table of the storage exists: " + tables);
        return "LOCK TABLE " + String.join(", ", tables) + " IN ROW EXCLUSIVE MODE";
    }

    /**
     * A second boot on an up-to-date schema issues no DDL: it completes while every table is held ROW
     * EXCLUSIVE by another transaction. Any DDL on those tables would wait for that transaction, which is never
     * released before the boot ends; a DDL attempt would also only fail after its 5 s lock timeout.
     */
    @Test
    void aSecondBootOnAnUpToDateSchemaIssuesNoDdl() {
        String s = freshSchema();
        boot(s).await().atMost(WAIT);
        try (HeldTransaction pushes = HeldTransaction.begin(pool, busyTables(s))) {
            long t0 = System.nanoTime();
            boot(s).await().atMost(Duration.ofMillis(StartupDdl.DDL_LOCK_TIMEOUT_MS - 1000));
            assertTrue(System.nanoTime() - t0 < TimeUnit.MILLISECONDS.toNanos(StartupDdl.DDL_LOCK_TIMEOUT_MS));
        }
    }

    /**
     * A boot that does find something missing (an index of an older release) runs only that DDL, under
     * {@code lock_timeout}: behind a busy table it gives up after the timeout and retries in a new transaction
     * (pushes queued behind its lock request go on meanwhile), and completes once the table is free.
     */
    @Test
    void missingDdlRunsUnderALockTimeoutAndIsRetried() throws Exception {
        String s = freshSchema();
        boot(s).await().atMost(WAIT);
        pool.query("DROP INDEX \"" + s + "\".sync_tombstones_by_seq")
                .execute()
                .await()
                .atMost(WAIT);
        CompletableFuture<Void> booting;
        try (HeldTransaction pushes = HeldTransaction.begin(pool, busyTables(s))) {
            booting = boot(s).subscribeAsCompletionStage();
            int first = pushes.awaitBlocked();
            String firstStart = xactStart(first);
            // the first attempt ends at its lock timeout; the retry is a new transaction, blocked again
            long deadline = System.nanoTime() + WAIT.toNanos();
            String retryStart = firstStart;
            while (retryStart == null || retryStart.equals(firstStart)) {
                assertTrue(System.nanoTime() < deadline, "the DDL transaction was not retried");
                int blocked = pushes.awaitBlocked();
                retryStart = xactStart(blocked);
            }
            assertFalse(booting.isDone(), "the boot waits while the table is busy");
        }
        booting.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertEquals(
                1L,
                pool.preparedQuery("SELECT count(*) FROM pg_indexes WHERE schemaname = $1 AND indexname = $2")
                        .execute(Tuple.of(s, "sync_tombstones_by_seq"))
                        .await()
                        .atMost(WAIT)
                        .iterator()
                        .next()
                        .getLong(0));
    }

    /**
     * A database of an older release gains what this one adds: the {@code pending} column of the sweep marks,
     * the job table and the push-result age index (built concurrently, valid), and loses what this one dropped (the
     * commit-scope key index no statement reads, dropped concurrently).
     */
    @Test
    void anOlderDatabaseGainsTheNewObjects() {
        String s = freshSchema();
        // an older release's log: plain tables (LogLayout.PLAIN), where it kept sync_commit_scopes_by_key
        new PostgresSyncStorage(pool, s, PLAIN_LOG).ensureSchema(SCHEMA).await().atMost(WAIT);
        pool.query("DROP INDEX \"" + s + "\".sync_push_results_by_age; ALTER TABLE \"" + s
                        + "\".sync_blob_sweeps DROP COLUMN pending;" + " DROP TABLE \"" + s + "\".sync_jobs;"
                        + " CREATE INDEX sync_commit_scopes_by_key ON \"" + s
                        + "\".sync_commit_scopes (partition_id, scope_key, commit_seq)")
                .execute()
                .await()
                .atMost(WAIT);
        boot(s).await().atMost(WAIT);
        Row r = pool.preparedQuery("SELECT"
                        + " (SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass(quote_ident($1) || '.sync_push_results_by_age')),"
                        + " (SELECT count(*) FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'sync_blob_sweeps'"
                        + " AND column_name = 'pending'),"
                        + " to_regclass(quote_ident($1) || '.sync_jobs') IS NOT NULL,"
                        + " to_regclass(quote_ident($1) || '.sync_commit_scopes_by_key') IS NULL")
                .execute(Tuple.of(s))
                .await()
                .atMost(WAIT)
                .iterator()
                .next();
        assertEquals(Boolean.TRUE, r.getBoolean(0));
        assertEquals(1L, r.getLong(1));
        assertEquals(Boolean.TRUE, r.getBoolean(2));
        assertEquals(Boolean.TRUE, r.getBoolean(3), "the unread index is gone");
    }

    private static String xactStart(int pid) {
        Row r = pool.preparedQuery("SELECT xact_start::text FROM pg_stat_activity WHERE pid = $1")
                .execute(Tuple.of(pid))
                .await()
                .atMost(WAIT)
                .iterator()
                .next();
        return r.getString(0);
    }
}
