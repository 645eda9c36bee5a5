package dev.syncular.server.storage.postgres;

import dev.syncular.server.storage.PartitionState;
import dev.syncular.server.storage.PruneResult;
import dev.syncular.server.storage.RetentionInputs;
import dev.syncular.server.storage.StorageException;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Pruning (§4.6 the pruning horizon, {@code pruneCommitsThrough}; §2.3 retained push results), in short
 * transactions so a first prune of a long log never holds the partition lock, or one transaction, for long:
 *
 * <ol>
 *   <li>the horizon: one transaction under the partition lock verifies the log epoch (§2.1; a mismatch refuses
 *       before any deletion) and advances {@code horizonSeq} (never lowering it). From its commit on, every
 *       commit at or below the horizon is pruned as far as any reader is concerned (pulls recheck the horizon);
 *   <li>the deletion: commits, changes, scope-index entries and tombstones at or below the horizon, in batches of
 *       {@code batchCommits} commit sequences from the lowest one still stored, each batch its own READ
 *       COMMITTED transaction without the partition lock (pushes append above the horizon). A failure leaves
 *       the horizon advanced and the rest stored: every prune re-runs the deletion, so it finishes later (§4.6
 *       "retry the operation even when the horizon does not advance, so older incomplete cleanup can
 *       finish"). Nothing at or below the horizon is ever deleted before the horizon covers it.
 * </ol>
 *
 * Rows and client records survive. Push results are pruned separately by age ({@link #prunePushResults}), in
 * batches of {@code batchResults}; the retention rules are the caller's, fed by {@link #retentionInputs}, one page
 * of partitions at a time with each one's lowest active cursor aggregated in SQL.
 *
 * <p>Batches are iterated, never chained recursively: a first prune of a long log runs thousands of batches, and
 * a chain of that depth completes through as many nested frames (the chart runs pods with {@code -Xss512k}).
 */
final class Pruning {
    private final Pool pool;
    private final PartitionRegistry registry;
    private final int batchCommits;
    private final int batchResults;

    private final String setHorizon;
    private final String lowestStored;
    private final String pruneCommitScopes;
    private final String pruneChanges;
    private final String pruneCommits;
    private final String pruneTombstones;
    private final String prunePushResults;
    private final String retentionPage;

    Pruning(Pool pool, String pgSchema, PartitionRegistry registry, int batchCommits, int batchResults) {
        this.pool = pool;
        this.registry = registry;
        this.batchCommits = batchCommits;
        this.batchResults = batchResults;
        setHorizon = "UPDATE " + PgSql.qualified(pgSchema, "sync_partitions")
                + " SET horizon_seq = $2 WHERE partition_id = $1";
        StringBuilder lowest = new StringBuilder("SELECT LEAST(");
        String[] logTables = {"sync_commits", "sync_changes", "sync_commit_scopes", "sync_tombstones"};
        for (int i = 0; i < logTables.length; i++) {
            lowest.append(i == 0 ? "" : ", ")
                    .append("(SELECT min(commit_seq) FROM ")
                    .append(PgSql.qualified(pgSchema, logTables[i]))
                    .append(" WHERE partition_id = $1)");
        }
        lowestStored = lowest.append(")").toString();
        String range = " WHERE partition_id = $1 AND commit_seq > $2 AND commit_seq <= $3";
        pruneCommitScopes = "DELETE FROM " + PgSql.qualified(pgSchema, "sync_commit_scopes") + range;
        pruneChanges = "DELETE FROM " + PgSql.qualified(pgSchema, "sync_changes") + range;
        pruneCommits = "DELETE FROM " + PgSql.qualified(pgSchema, "sync_commits") + range;
        pruneTombstones = "DELETE FROM " + PgSql.qualified(pgSchema, "sync_tombstones") + range;
        String results = PgSql.qualified(pgSchema, "sync_push_results");
        // served by sync_push_results_by_age (partition_id, created_at_ms)
        // §4.6 retention inputs of a page of partitions: the lowest cursor of a client active since $3, per partition,
        // aggregated over sync_clients' (partition_id, client_id) key; client records are never loaded
        retentionPage = "SELECT p.partition_id, p.log_epoch, p.max_commit_seq, p.horizon_seq, p.created_at_ms,"
                + " p.last_seen_at_ms, (SELECT min(c.cursor) FROM " + PgSql.qualified(pgSchema, "sync_clients")
                + " c WHERE c.partition_id = p.partition_id AND c.updated_at_ms >= $3 AND c.cursor >= 0)"
                + " FROM " + PgSql.qualified(pgSchema, "sync_partitions") + " p"
                + " WHERE $1::text IS NULL OR p.partition_id COLLATE \"C\" > $1 ORDER BY p.partition_id COLLATE \"C\" LIMIT $2";
        prunePushResults = "DELETE FROM " + results + " WHERE ctid = ANY(ARRAY(SELECT ctid FROM " + results
                + " WHERE partition_id = $1 AND created_at_ms < $2 LIMIT $3))";
    }

    Uni<PruneResult> prune(String partition, String expectedLogEpoch, long throughSeq) {
        return PgSql.readCommitted(
                        pool,
                        conn -> registry.lockPartition(conn, partition).chain(state -> {
                            if (!state.logEpoch().equals(expectedLogEpoch)) {
                                return Uni.createFrom()
                                        .failure(new StorageException(
                                                StorageException.LOG_EPOCH_MISMATCH,
                                                "partition log epoch changed; recompute retention inputs",
                                                Map.of()));
                            }
                            long horizon = Math.max(state.horizonSeq(), Math.min(throughSeq, state.maxCommitSeq()));
                            return conn.preparedQuery(setHorizon)
                                    .execute(Tuple.of(partition, horizon))
                                    .replaceWith(new PruneResult(state.horizonSeq(), horizon, 0));
                        }))
                .chain(advanced -> pool.preparedQuery(lowestStored)
                        .execute(Tuple.of(partition))
                        .chain(rs -> {
                            Long lowest = PgSql.first(rs).getLong(0);
                            return lowest == null
                                    ? Uni.createFrom().item(advanced)
                                    : deleteBatches(partition, lowest - 1, advanced.horizonSeq())
                                            .map(removed -> new PruneResult(
                                                    advanced.previousHorizonSeq(), advanced.horizonSeq(), removed));
                        }));
    }

    /** Deletes the log at sequences {@code (after, horizon]}, {@link #batchCommits} sequences per transaction. */
    private Uni<Long> deleteBatches(String partition, long after, long horizon) {
        if (after >= horizon) {
            return Uni.createFrom().item(0L);
        }
        long[] done = {after};
        return Multi.createBy()
                .repeating()
                .uni(() -> done, d -> {
                    long upTo = Math.min(horizon, d[0] + batchCommits);
                    Tuple range = Tuple.of(partition, d[0], upTo);
                    return PgSql.readCommitted(
                                    pool,
                                    conn -> conn.preparedQuery(pruneCommitScopes)
                                            .execute(range)
                                            .chain(() -> conn.preparedQuery(pruneChanges)
                                                    .execute(range))
                                            .chain(() -> conn.preparedQuery(pruneTombstones)
                                                    .execute(range))
                                            .chain(() -> conn.preparedQuery(pruneCommits)
                                                    .execute(range)))
                            .map(rs -> {
                                d[0] = upTo;
                                return (long) rs.rowCount();
                            });
                })
                .whilst(removed -> done[0] < horizon)
                .collect()
                .with(Collectors.summingLong(Long::longValue));
    }

    /**
     * Deletes the partition's push results created before {@code createdBeforeMs}, {@link #batchResults} per
     * statement (each its own transaction) until none is left; yields how many.
     */
    Uni<Long> prunePushResults(String partition, long createdBeforeMs) {
        return Multi.createBy()
                .repeating()
                .uni(
                        () -> Tuple.of(partition, createdBeforeMs, batchResults),
                        args -> pool.preparedQuery(prunePushResults)
                                .execute(args)
                                .map(rs -> (long) rs.rowCount()))
                .whilst(removed -> removed >= batchResults)
                .collect()
                .with(Collectors.summingLong(Long::longValue));
    }

    /**
     * The retention inputs of at most {@code limit} partitions whose ids sort after {@code afterPartition} in byte
     * order ({@code null}: from the first), in that order; a client counts as active when its record moved at or
     * after {@code activeSinceMs}.
     */
    Uni<List<RetentionInputs>> retentionInputs(String afterPartition, int limit, long activeSinceMs) {
        return pool.preparedQuery(retentionPage)
                .execute(Tuple.of(afterPartition, limit, activeSinceMs))
                .map(rs -> {
                    List<RetentionInputs> page = new ArrayList<>(rs.size());
                    for (Row r : rs) {
                        Long lowest = r.getLong(6);
                        page.add(new RetentionInputs(
                                new PartitionState(
                                        r.getString(0),
                                        r.getString(1),
                                        r.getLong(2),
                                        r.getLong(3),
                                        r.getLong(4),
                                        r.getLong(5)),
                                lowest == null ? RetentionInputs.NO_ACTIVE_CURSOR : lowest));
                    }
                    return page;
                });
    }
}
