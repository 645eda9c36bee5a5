package dev.syncular.server.operations;

import dev.syncular.server.sync.RegisteredQueries;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.buffer.Buffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jboss.logging.Logger;

/**
 * SPEC §6.7 / §6.8 {@code queryAuthoritative} over the registry: the transaction-bound registered query. The query
 * (operation id or bare name) is bound as for {@code POST /operations} ({@link QueryBinding}: variant by activation
 * mask, binds in placeholder order, a missing required or unknown input {@code operation.invalid_request}),
 * partition-rewritten as for every registered query (REMOTE.md §2, {@link PartitionRewrite}: {@code $1} the
 * commit's partition, bound by the push transaction itself) and run by the engine on the push transaction's
 * connection over the candidate state, with {@code LIMIT maxRows + 1}: more rows is
 * {@code operation.result_too_large}, a failing statement {@code operation.query_failed} (the database message is
 * logged, never passed on), a value of another type than its column {@code operation.query_failed}. §2.1
 * authorization does not apply (§6.8: a server-host capability inside the already authenticated partition).
 */
public final class TransactionBoundQueries implements RegisteredQueries {
    private static final Logger LOG = Logger.getLogger(TransactionBoundQueries.class);
    private final QueryRegistry registry;
    private final QueryExecutor executor;

    public TransactionBoundQueries(QueryRegistry registry, QueryExecutor executor) {
        this.registry = registry;
        this.executor = executor;
    }

    @Override
    public Uni<List<Map<String, Object>>> query(String operation, Map<String, Object> params, Statements statements) {
        QueryDefinition query;
        List<String> binds;
        String sql;
        try {
            query = registry.findByIdOrName(operation)
                    .orElseThrow(() -> new OperationException(
                            OperationErrorCode.UNKNOWN, "no query is registered with this id or name"));
            QueryBinding binding = QueryBinding.of(query, tagged(params));
            binds = new ArrayList<>(binding.values().size() + 1);
            for (Object v : binding.values()) {
                binds.add(text(v));
            }
            binds.add(Integer.toString(query.maxRows() + 1));
            sql = executor.guardedSqlFor(binding.statement());
        } catch (RuntimeException e) {
            return Uni.createFrom().failure(e);
        }
        QueryDefinition q = query;
        return statements
                .run(q.tables(), sql, binds)
                .onFailure(e -> !(e instanceof OperationException))
                .transform(e -> {
                    LOG.debugf("transaction-bound query %s failed: %s", q.name(), e.getMessage());
                    return new OperationException(OperationErrorCode.QUERY_FAILED, "registered query execution failed");
                })
                .map(rows -> {
                    if (rows.rows().size() > q.maxRows()) {
                        throw new OperationException(
                                OperationErrorCode.RESULT_TOO_LARGE, "the query result exceeds its maxRows");
                    }
                    List<Map<String, Object>> out = new ArrayList<>(rows.rows().size());
                    for (OperationValue row : QueryResultRows.normalize(rows, q.columns())) {
                        out.add(plain(q, (OperationValue.Obj) row));
                    }
                    return Collections.unmodifiableList(out);
                });
    }

    /** A bind value as the text its cast reads ({@code bytea} from {@code \\x} hex). */
    private static String text(Object v) {
        if (v == null) {
            return null;
        }
        if (v instanceof Buffer b) {
            return "\\x" + HexFormat.of().formatHex(b.getBytes());
        }
        if (v instanceof Double d) {
            return Double.toString(d); // finite: the codec and QueryBinding admit no other
        }
        return v.toString();
    }

    /** The params as a §4 object: Java values to tagged ones; anything else is {@code operation.invalid_request}. */
    private static OperationValue tagged(Map<String, Object> params) {
        Map<String, OperationValue> fields = new LinkedHashMap<>();
        params.forEach((k, v) -> fields.put(k, tagged(v)));
        return new OperationValue.Obj(fields);
    }

    private static OperationValue tagged(Object v) {
        if (v == null) {
            return OperationValue.Null.INSTANCE;
        }
        if (v instanceof String s) {
            return new OperationValue.Text(s);
        }
        if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
            return new OperationValue.Integer(((Number) v).longValue());
        }
        if (v instanceof Double || v instanceof Float) {
            double d = ((Number) v).doubleValue();
            if (Double.isFinite(d)) {
                return new OperationValue.Number(d);
            }
        }
        if (v instanceof Boolean b) {
            return new OperationValue.Bool(b);
        }
        if (v instanceof byte[] b) {
            return new OperationValue.Bytes(b.clone());
        }
        throw OperationException.invalid("a param value is not a string, integer, finite number, boolean or bytes");
    }

    /** A normalized row as plain Java, integers as {@code Long}. */
    private static Map<String, Object> plain(QueryDefinition query, OperationValue.Obj row) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (QueryDefinition.Column c : query.columns()) {
            Object v = CommandParams.plain(row.get(c.langName()));
            if (c.type().equals("integer") && v instanceof Double d) {
                v = d.longValue();
            }
            out.put(c.langName(), v);
        }
        return Collections.unmodifiableMap(out);
    }
}
