package dev.syncular.server.storage.postgres;

import static dev.syncular.server.storage.postgres.PgSql.first;

import dev.syncular.server.storage.PushOutcome;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.wire.CommitStatus;
import io.smallrye.mutiny.Uni;
import io.vertx.core.buffer.Buffer;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import io.vertx.pgclient.PgException;
import java.util.Map;

/**
 * Idempotency records (§2.3: one retained push result per partition, client id and client commit id) in
 * {@code sync_push_results}: the optimistic lookup outside the partition lock, the locked lookup of a push
 * transaction and of the group read-ahead, and the record insert. An applied commit's record usually joins
 * the commit's append statement instead ({@link PushTransaction}).
 */
final class PushResults {
    private final Pool pool;

    final String findPushResult;
    /**
     * The records of several idempotency keys of partition {@code $1} ({@code $2} client ids, {@code $3}
     * client commit ids, parallel arrays; §6.3, the group's locked lookups): key columns, then the {@link #findPushResult} columns. One primary-key
     * probe per key whatever the plan (the {@code LIMIT 1} subquery is never flattened): as a join, a generic plan
     * made while the table was small hashed every record of the partition through {@code sync_push_results_by_age},
     * under the partition lock (auto_explain under bench/tenants.sh: 2,000-3,000 rows read per lookup of 10 keys).
     */
    final String findPushResults;

    final String insertPushResult;

    PushResults(Pool pool, String pgSchema) {
        this.pool = pool;
        String results = PgSql.qualified(pgSchema, "sync_push_results");
        findPushResult = "SELECT status, commit_seq, result, created_at_ms FROM " + results
                + " WHERE partition_id = $1 AND client_id = $2 AND client_commit_id = $3";
        findPushResults = "SELECT k.c, k.cc, r.status, r.commit_seq, r.result, r.created_at_ms"
                + " FROM unnest($2::text[], $3::text[]) AS k(c, cc) CROSS JOIN LATERAL (SELECT status, commit_seq,"
                + " result, created_at_ms FROM " + results + " WHERE partition_id = $1 AND client_id = k.c"
                + " AND client_commit_id = k.cc LIMIT 1) r";
        insertPushResult = "INSERT INTO " + results + " (partition_id, client_id, client_commit_id,"
                + " status, commit_seq, result, created_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7)";
    }

    /**
     * An idempotency record's values (§2.3): client id, client commit id, status, commit seq, result, created at
     * (the trailing arguments of {@link PushContext#appendCommitWithResult}).
     */
    static Tuple resultArgs(String clientId, String clientCommitId, PushOutcome outcome) {
        return Tuple.tuple()
                .addValue(clientId)
                .addValue(clientCommitId)
                .addValue(outcome.status().code)
                .addValue(outcome.commitSeq())
                .addValue(Buffer.buffer(outcome.result()))
                .addValue(outcome.createdAtMs());
    }

    /** The arguments of {@link #insertPushResult}: the partition, then the record's {@link #resultArgs}. */
    static Tuple insertArgs(String partition, Tuple result) {
        return Tuple.of(partition)
                .addValue(result.getValue(0))
                .addValue(result.getValue(1))
                .addValue(result.getValue(2))
                .addValue(result.getValue(3))
                .addValue(result.getValue(4))
                .addValue(result.getValue(5));
    }

    Uni<PushOutcome> findPushResult(String partition, String clientId, String clientCommitId) {
        return findPushResult(pool, partition, clientId, clientCommitId);
    }

    Uni<PushOutcome> findPushResult(SqlClient c, String partition, String clientId, String clientCommitId) {
        return c.preparedQuery(findPushResult)
                .execute(Tuple.of(partition, clientId, clientCommitId))
                .map(rs -> {
                    Row r = first(rs);
                    return r == null ? null : pushOutcome(r, 0);
                });
    }

    /** A push result from the status, commit seq, result and created-at columns starting at {@code at}. */
    static PushOutcome pushOutcome(Row r, int at) {
        return new PushOutcome(
                CommitStatus.of(r.getInteger(at)),
                r.getLong(at + 1),
                PgSql.bytes(r.getBuffer(at + 2)),
                r.getLong(at + 3));
    }

    /**
     * A record insert's failure as the storage reports it: a unique violation of {@code sync_push_results} (the key
     * already holds a result, §2.3) is {@link StorageException#DUPLICATE_PUSH_RESULT} — raised, not skipped, so the
     * transaction it ran in is aborted and cannot commit the rest of the push — anything else unchanged.
     */
    static Throwable duplicate(Throwable t) {
        if (t instanceof PgException pe
                && "23505".equals(pe.getSqlState())
                && "sync_push_results".equals(pe.getTable())) {
            return duplicatePushResult();
        }
        return t;
    }

    static StorageException duplicatePushResult() {
        return new StorageException(
                StorageException.DUPLICATE_PUSH_RESULT, "idempotency key already holds a result", Map.of());
    }
}
