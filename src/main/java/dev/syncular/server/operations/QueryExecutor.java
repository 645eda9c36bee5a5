package dev.syncular.server.operations;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.storage.RowTables;
import dev.syncular.server.storage.postgres.PostgresReadReplicas;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.Tuple;
import io.vertx.pgclient.PgException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jboss.logging.Logger;

/**
 * Runs a bound registered query on PostgreSQL (REMOTE.md §2): in one {@code REPEATABLE READ READ ONLY}
 * transaction — one snapshot — the partition's {@code maxCommitSeq} and the partition-rewritten statement with
 * {@code LIMIT maxRows + 1}, under {@code syncular.storage.statement-timeout} as every pull. More rows than
 * {@code maxRows} is {@code operation.result_too_large}, never a partial result; an SQL failure is
 * {@code operation.query_failed} (the database message is logged, never answered).
 */
public final class QueryExecutor {
    private static final Logger LOG = Logger.getLogger(QueryExecutor.class);

    /** Rows and the partition's {@code maxCommitSeq} of one snapshot. */
    public record Result(List<OperationValue> rows, long maxCommitSeq) {}

    private final Pool pool;
    private final QuerySnapshots snapshots;
    private final RowTables storage;
    private final CompiledSchema schema;
    private final String timeoutStatement;
    private final String maxCommitSeqSql;
    private final Map<QueryDefinition.Statement, String> rewritten = new ConcurrentHashMap<>();
    private final Map<QueryDefinition.Statement, String> guarded = new ConcurrentHashMap<>();

    /**
     * @param snapshots where a query's snapshot runs: {@link QuerySnapshots#primary} or the read replicas
     *                  (docs/SCALING.md, "Reads from replicas")
     */
    public QueryExecutor(
            Pool pool, QuerySnapshots snapshots, RowTables storage, CompiledSchema schema, Duration statementTimeout) {
        this.pool = pool;
        this.snapshots = snapshots;
        this.storage = storage;
        this.schema = schema;
        this.timeoutStatement = "SET LOCAL statement_timeout = " + Math.max(0, statementTimeout.toMillis());
        this.maxCommitSeqSql =
                "SELECT max_commit_seq FROM " + storage.qualified("sync_partitions") + " WHERE partition_id = $1";
    }

    /** The PostgreSQL text a statement runs as (rewritten once, then reused). */
    public String sqlFor(QueryDefinition.Statement statement) {
        return rewritten.computeIfAbsent(
                statement, s -> PartitionRewrite.rewrite(s, schema, storage::qualifiedRowTable));
    }

    /**
     * The text a statement runs as inside a push transaction (§6.7 {@code queryAuthoritative},
     * {@code PushTx.queryRows}): its arguments read from one text array {@code $1} — {@code $1[1]} the partition,
     * then the binds, then the {@code LIMIT} — each cast to its declared type.
     */
    public String guardedSqlFor(QueryDefinition.Statement statement) {
        return guarded.computeIfAbsent(statement, s -> {
            List<QueryDefinition.Bind> binds = s.binds();
            return PartitionRewrite.rewrite(s, schema, storage::qualifiedRowTable, n -> {
                String type = n == 1
                        ? "text"
                        : n - 2 < binds.size() ? sqlType(binds.get(n - 2).type()) : "bigint";
                return "($1[" + n + "])::" + type;
            });
        });
    }

    private static String sqlType(String declared) {
        return switch (declared) {
            case "integer" -> "bigint";
            case "float" -> "double precision";
            case "boolean" -> "boolean";
            case "bytes", "crdt" -> "bytea";
            default -> "text";
        };
    }

    public Uni<Result> run(String partition, QueryDefinition query, QueryBinding binding) {
        String sql = sqlFor(binding.statement());
        List<Object> args = new ArrayList<>(binding.values().size() + 2);
        args.add(partition);
        args.addAll(binding.values());
        args.add(query.maxRows() + 1);
        return snapshots
                .run(partition, pool, (target, need) -> runOn(target, need, partition, query, sql, args))
                .onFailure(e -> !(e instanceof OperationException))
                .transform(e -> {
                    LOG.warnf("registered query %s could not run: %s", query.name(), e.toString());
                    return new OperationException(
                            OperationErrorCode.EXECUTION_FAILED, "registered query could not run");
                });
    }

    /**
     * The snapshot on {@code target}: the partition's {@code maxCommitSeq}, then the statement, in one
     * {@code REPEATABLE READ READ ONLY} transaction. On a replica, a {@code maxCommitSeq} below {@code need} fails
     * {@link PostgresReadReplicas.Behind} before the statement runs (the query then runs on the primary).
     */
    private Uni<Result> runOn(
            Pool target, long need, String partition, QueryDefinition query, String sql, List<Object> args) {
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
                            .transform(e -> {
                                LOG.debugf("registered query %s failed: %s", query.name(), e.getMessage());
                                return new OperationException(
                                        OperationErrorCode.QUERY_FAILED, "registered query execution failed");
                            })
                            .map(rows -> result(rows, query, maxCommitSeq));
                }));
    }

    /** SQLSTATE class 40 (a hot standby's "canceling statement due to conflict with recovery", 40001). */
    private static boolean recoveryConflict(Throwable e) {
        return e instanceof PgException pg
                && pg.getSqlState() != null
                && pg.getSqlState().startsWith("40");
    }

    private static Result result(RowSet<Row> rows, QueryDefinition query, long maxCommitSeq) {
        if (rows.size() > query.maxRows()) {
            throw new OperationException(OperationErrorCode.RESULT_TOO_LARGE, "the query result exceeds its maxRows");
        }
        return new Result(QueryResultRows.normalize(rows, query.columns()), maxCommitSeq);
    }
}
