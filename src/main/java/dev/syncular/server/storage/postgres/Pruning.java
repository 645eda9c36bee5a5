package dev.syncular.server.storage.postgres;

import dev.syncular.server.storage.PruneResult;
import dev.syncular.server.storage.StorageException;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import java.util.Map;

/**
 * Pruning the commit log (§4.6 the pruning horizon, {@code pruneCommitsThrough}): under the partition lock,
 * verifies the log epoch (§2.1), advances {@code horizonSeq} (never lowering it) and deletes the commits,
 * changes, scope-index entries and tombstones at or below it, in one transaction. Rows, push results and
 * client records survive; the retention policy is the caller's.
 */
final class Pruning {
    private final Pool pool;
    private final PartitionRegistry registry;

    private final String setHorizon;
    private final String pruneCommitScopes;
    private final String pruneChanges;
    private final String pruneCommits;
    private final String pruneTombstones;

    Pruning(Pool pool, String pgSchema, PartitionRegistry registry) {
        this.pool = pool;
        this.registry = registry;
        setHorizon = "UPDATE " + PgSql.qualified(pgSchema, "sync_partitions") + " SET horizon_seq = $2 WHERE partition_id = $1";
        pruneCommitScopes = "DELETE FROM " + PgSql.qualified(pgSchema, "sync_commit_scopes") + " WHERE partition_id = $1 AND commit_seq <= $2";
        pruneChanges = "DELETE FROM " + PgSql.qualified(pgSchema, "sync_changes") + " WHERE partition_id = $1 AND commit_seq <= $2";
        pruneCommits = "DELETE FROM " + PgSql.qualified(pgSchema, "sync_commits") + " WHERE partition_id = $1 AND commit_seq <= $2";
        pruneTombstones = "DELETE FROM " + PgSql.qualified(pgSchema, "sync_tombstones") + " WHERE partition_id = $1 AND commit_seq <= $2";
    }

    Uni<PruneResult> prune(String partition, String expectedLogEpoch, long throughSeq) {
        return pool.withTransaction(conn -> registry.lockPartition(conn, partition).chain(state -> {
            if (!state.logEpoch().equals(expectedLogEpoch)) {
                return Uni.createFrom().failure(new StorageException(StorageException.LOG_EPOCH_MISMATCH,
                        "partition log epoch changed; recompute retention inputs", Map.of()));
            }
            long previous = state.horizonSeq();
            long horizon = Math.max(previous, Math.min(throughSeq, state.maxCommitSeq()));
            Tuple args = Tuple.of(partition, horizon);
            long[] removed = {0};
            return conn.preparedQuery(setHorizon)
                    .execute(args)
                    .chain(() -> conn.preparedQuery(pruneCommitScopes).execute(args))
                    .chain(() -> conn.preparedQuery(pruneChanges).execute(args))
                    .chain(() -> conn.preparedQuery(pruneCommits).execute(args))
                    .invoke(rs -> removed[0] = rs.rowCount())
                    .chain(() -> conn.preparedQuery(pruneTombstones).execute(args))
                    .map(rs -> new PruneResult(previous, horizon, removed[0]));
        }));
    }
}
