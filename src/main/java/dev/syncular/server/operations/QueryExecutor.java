package dev.syncular.server.operations;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.storage.QueryReads;
import dev.syncular.server.storage.QuerySnapshot;
import dev.syncular.server.storage.RowTables;
import dev.syncular.server.storage.StorageException;
import io.smallrye.mutiny.Uni;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jboss.logging.Logger;

/**
 * Runs a bound registered query (REMOTE.md §2): the partition-rewritten statement with {@code LIMIT maxRows + 1},
 * read by the storage in one snapshot with the partition's {@code maxCommitSeq} ({@link QueryReads#readSnapshot}: one
 * {@code REPEATABLE READ READ ONLY} transaction under {@code syncular.storage.statement-timeout} as every pull, on
 * the primary or a read replica). More rows than {@code maxRows} is {@code operation.result_too_large}, never a
 * partial result; an SQL failure is {@code operation.query_failed} (the database message is logged, never answered).
 */
public final class QueryExecutor {
    private static final Logger LOG = Logger.getLogger(QueryExecutor.class);

    /** Rows and the partition's {@code maxCommitSeq} of one snapshot. */
    public record Result(List<OperationValue> rows, long maxCommitSeq) {}

    private final QueryReads reads;
    private final RowTables storage;
    private final CompiledSchema schema;
    private final Map<QueryDefinition.Statement, String> rewritten = new ConcurrentHashMap<>();
    private final Map<QueryDefinition.Statement, String> guarded = new ConcurrentHashMap<>();

    /**
     * @param reads   where a query's snapshot runs (the primary or the read replicas, docs/SCALING.md "Reads from
     *                replicas")
     * @param storage the SQL names a statement is rewritten to
     */
    public QueryExecutor(QueryReads reads, RowTables storage, CompiledSchema schema) {
        this.reads = reads;
        this.storage = storage;
        this.schema = schema;
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
        return reads.readSnapshot(partition, sql, args)
                .onFailure(e -> e instanceof StorageException se && StorageException.QUERY_FAILED.equals(se.code()))
                .transform(e -> {
                    LOG.debugf(
                            "registered query %s failed: %s",
                            query.name(),
                            e.getCause() == null ? null : e.getCause().getMessage());
                    return new OperationException(OperationErrorCode.QUERY_FAILED, "registered query execution failed");
                })
                .map(rows -> result(rows, query))
                .onFailure(e -> !(e instanceof OperationException))
                .transform(e -> {
                    LOG.warnf("registered query %s could not run: %s", query.name(), e.toString());
                    return new OperationException(
                            OperationErrorCode.EXECUTION_FAILED, "registered query could not run");
                });
    }

    private static Result result(QuerySnapshot rows, QueryDefinition query) {
        if (rows.rows().size() > query.maxRows()) {
            throw new OperationException(OperationErrorCode.RESULT_TOO_LARGE, "the query result exceeds its maxRows");
        }
        return new Result(QueryResultRows.normalize(rows, query.columns()), rows.maxCommitSeq());
    }
}
