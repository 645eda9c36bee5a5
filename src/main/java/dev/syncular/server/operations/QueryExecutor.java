package dev.syncular.server.operations;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.storage.RowTables;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.Tuple;
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
    private final RowTables storage;
    private final CompiledSchema schema;
    private final String timeoutStatement;
    private final String maxCommitSeqSql;
    private final Map<QueryDefinition.Statement, String> rewritten = new ConcurrentHashMap<>();
    private final Map<QueryDefinition.Statement, String> guarded = new ConcurrentHashMap<>();

    public QueryExecutor(Pool pool, RowTables storage, CompiledSchema schema, Duration statementTimeout) {
        this.pool = pool;
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
        return pool.withTransaction(conn -> conn.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                        .execute()
                        .chain(() -> conn.query(timeoutStatement).execute())
                        .chain(() -> conn.preparedQuery(maxCommitSeqSql).execute(Tuple.of(partition)))
                        .chain(seqRows -> {
                            long seq = 0;
                            for (Row r : seqRows) {
                                seq = r.getLong(0);
                            }
                            long maxCommitSeq = seq;
                            return conn.preparedQuery(sql)
                                    .execute(Tuple.from(args))
                                    .onFailure()
                                    .transform(e -> {
                                        LOG.debugf("registered query %s failed: %s", query.name(), e.getMessage());
                                        return new OperationException(
                                                OperationErrorCode.QUERY_FAILED, "registered query execution failed");
                                    })
                                    .map(rows -> result(rows, query, maxCommitSeq));
                        }))
                .onFailure(e -> !(e instanceof OperationException))
                .transform(e -> {
                    LOG.warnf("registered query %s could not run: %s", query.name(), e.toString());
                    return new OperationException(
                            OperationErrorCode.EXECUTION_FAILED, "registered query could not run");
                });
    }

    private static Result result(RowSet<Row> rows, QueryDefinition query, long maxCommitSeq) {
        if (rows.size() > query.maxRows()) {
            throw new OperationException(OperationErrorCode.RESULT_TOO_LARGE, "the query result exceeds its maxRows");
        }
        return new Result(QueryResultRows.normalize(rows, query.columns()), maxCommitSeq);
    }
}
