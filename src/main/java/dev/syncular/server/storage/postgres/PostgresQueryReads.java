package dev.syncular.server.storage.postgres;

import dev.syncular.server.storage.QueryReads;
import dev.syncular.server.storage.QuerySnapshot;
import dev.syncular.server.storage.ReadReplicas;
import dev.syncular.server.storage.StorageException;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.Tuple;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.data.Numeric;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@link QueryReads} on PostgreSQL: a registered query's snapshot (REMOTE.md §2) in one {@code REPEATABLE READ READ
 * ONLY} transaction on the primary's pool or, through {@link PostgresReadReplicas#snapshot}, on a hot standby that has
 * replayed far enough (docs/SCALING.md, "Reads from replicas"); the tables of notified commits (REMOTE.md §6) with
 * {@code SELECT DISTINCT tbl FROM sync_changes WHERE partition_id = $1 AND commit_seq = ANY($2)} over the change
 * log's primary key.
 */
public final class PostgresQueryReads implements QueryReads {
    private final Pool pool;
    private final ReadReplicas replicas;
    private final String timeoutStatement;
    private final String maxCommitSeqSql;
    private final String changedTablesSql;

    /**
     * @param replicas         the pod's read replicas ({@link ReadReplicas#NONE}: every snapshot on the primary)
     * @param statementTimeout the {@code statement_timeout} of a snapshot's transaction (as every pull's)
     */
    public PostgresQueryReads(
            Pool pool, PostgresSyncStorage storage, ReadReplicas replicas, Duration statementTimeout) {
        this.pool = pool;
        this.replicas = replicas;
        this.timeoutStatement = "SET LOCAL statement_timeout = " + Math.max(0, statementTimeout.toMillis());
        this.maxCommitSeqSql =
                "SELECT max_commit_seq FROM " + storage.qualified("sync_partitions") + " WHERE partition_id = $1";
        this.changedTablesSql = "SELECT DISTINCT tbl FROM " + storage.qualified("sync_changes")
                + " WHERE partition_id = $1 AND commit_seq = ANY($2)";
    }

    @Override
    public Uni<QuerySnapshot> readSnapshot(String partition, String sql, List<Object> args) {
        if (!(replicas instanceof PostgresReadReplicas standbys)) {
            return snapshotOn(pool, -1L, partition, sql, args);
        }
        // a statement's own failure is the query's; any other is the replica's (docs/SCALING.md)
        return standbys.snapshot(
                partition,
                pool,
                (target, need) -> snapshotOn(target, need, partition, sql, args),
                e -> !(e instanceof StorageException se && StorageException.QUERY_FAILED.equals(se.code())));
    }

    @Override
    public Uni<Set<String>> changedTables(String partition, List<Long> commitSeqs) {
        return pool.preparedQuery(changedTablesSql)
                .execute(Tuple.of(partition, commitSeqs.toArray(Long[]::new)))
                .map(rows -> {
                    Set<String> tables = new HashSet<>();
                    for (Row r : rows) {
                        tables.add(r.getString(0));
                    }
                    return tables;
                });
    }

    /**
     * The snapshot on {@code target}: the partition's {@code maxCommitSeq}, then the statement, in one
     * {@code REPEATABLE READ READ ONLY} transaction. On a replica, a {@code maxCommitSeq} below {@code need} fails
     * {@link PostgresReadReplicas.Behind} before the statement runs (the query then runs on the primary).
     */
    private Uni<QuerySnapshot> snapshotOn(Pool target, long need, String partition, String sql, List<Object> args) {
        return target.withTransaction(conn -> conn.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                .execute()
                .chain(() -> conn.query(timeoutStatement).execute())
                .chain(() -> conn.preparedQuery(maxCommitSeqSql).execute(Tuple.of(partition)))
                .chain(seqRows -> {
                    long seq = 0;
                    boolean registered = false;
                    for (Row r : seqRows) {
                        seq = r.getLong(0);
                        registered = true;
                    }
                    if ((registered ? seq : -1) < need) {
                        return Uni.createFrom().failure(new PostgresReadReplicas.Behind());
                    }
                    long maxCommitSeq = seq;
                    return conn.preparedQuery(sql)
                            .execute(Tuple.from(args))
                            // a hot standby cancels a statement that conflicts with replay: the replica's failure,
                            // not the query's (the query reruns on the primary)
                            .onFailure(e -> target == pool || !recoveryConflict(e))
                            .transform(PostgresQueryReads::queryFailed)
                            .map(rows -> snapshot(rows, maxCommitSeq));
                }));
    }

    private static StorageException queryFailed(Throwable e) {
        Map<String, Object> details = e instanceof PgException pg && pg.getSqlState() != null
                ? Map.of("sqlstate", pg.getSqlState())
                : Map.of();
        return new StorageException(StorageException.QUERY_FAILED, "registered query execution failed", details, e);
    }

    /** SQLSTATE class 40 (a hot standby's "canceling statement due to conflict with recovery", 40001). */
    private static boolean recoveryConflict(Throwable e) {
        return e instanceof PgException pg
                && pg.getSqlState() != null
                && pg.getSqlState().startsWith("40");
    }

    private static QuerySnapshot snapshot(RowSet<Row> rows, long maxCommitSeq) {
        List<String> names = rows.columnsNames();
        List<List<Object>> out = new ArrayList<>(rows.size());
        for (Row row : rows) {
            List<Object> values = new ArrayList<>(row.size());
            for (int i = 0; i < row.size(); i++) {
                values.add(plain(row.getValue(i)));
            }
            out.add(Collections.unmodifiableList(values));
        }
        return new QuerySnapshot(names == null ? List.of() : names, out, maxCommitSeq);
    }

    /** A {@code numeric} as a {@code BigDecimal} ({@code Double.NaN} for its NaN); any other value as it is. */
    private static Object plain(Object v) {
        if (v instanceof Numeric n) {
            java.math.BigDecimal d = n.bigDecimalValue();
            return d != null ? d : (Object) Double.valueOf(n.doubleValue());
        }
        return v;
    }
}
