package dev.syncular.server.operations;

import dev.syncular.server.storage.QueryRows;
import dev.syncular.server.storage.QuerySnapshot;
import dev.syncular.server.wire.Json;
import io.vertx.core.buffer.Buffer;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.IntFunction;

/**
 * REMOTE.md §2 result normalization: only the columns named by the generated result metadata, read by position
 * (the statement's select list is the metadata's order; PostgreSQL folds an unquoted alias to lower case, so the
 * name must equal the column's {@code langName} or its lower-case form), each value normalized to the declared
 * type and keyed by {@code langName}. A missing column, a null for a non-nullable column or a value of another
 * type is {@code operation.query_failed}. Integers are answered as numbers and must be safe integers (the
 * generated client reads JavaScript numbers); json is the JSON text, validated; bytes and crdt are bytes.
 */
final class QueryResultRows {
    private static final double MAX_SAFE = 9.007199254740991E15;

    private QueryResultRows() {}

    static List<OperationValue> normalize(QuerySnapshot rows, List<QueryDefinition.Column> columns) {
        checkNames(rows.columns(), columns);
        List<OperationValue> out = new ArrayList<>(rows.rows().size());
        for (List<Object> row : rows.rows()) {
            out.add(row(columns, row::get));
        }
        return out;
    }

    /**
     * {@link #normalize(QuerySnapshot, List)} of a statement run inside a push transaction (§6.7 queryAuthoritative,
     * {@code PushTx.queryRows}: values as PostgreSQL writes them in JSON, {@code bytea} as {@code \\x} hex text;
     * without rows there are no column names to check).
     */
    static List<OperationValue> normalize(QueryRows rows, List<QueryDefinition.Column> columns) {
        if (!rows.rows().isEmpty()) {
            checkNames(rows.columns(), columns);
        }
        List<OperationValue> out = new ArrayList<>(rows.rows().size());
        for (List<Object> row : rows.rows()) {
            if (row.size() != columns.size()) {
                throw failed("registered query returned other columns than its result metadata");
            }
            out.add(row(columns, i -> fromJson(row.get(i), columns.get(i))));
        }
        return out;
    }

    /** A {@code bytes} / {@code crdt} value's {@code \\x} hex text as bytes; anything else as it is. */
    private static Object fromJson(Object v, QueryDefinition.Column c) {
        if ((c.type().equals("bytes") || c.type().equals("crdt")) && v instanceof String s && s.startsWith("\\x")) {
            try {
                return Buffer.buffer(HexFormat.of().parseHex(s.substring(2)));
            } catch (IllegalArgumentException e) {
                throw failed("registered query returned a value of another type than its column");
            }
        }
        return v;
    }

    private static void checkNames(List<String> names, List<QueryDefinition.Column> columns) {
        if (names == null || names.size() != columns.size()) {
            throw failed("registered query returned other columns than its result metadata");
        }
        for (int i = 0; i < columns.size(); i++) {
            String lang = columns.get(i).langName();
            String got = names.get(i);
            if (!got.equals(lang) && !got.equals(lang.toLowerCase(Locale.ROOT))) {
                throw failed("registered query returned other columns than its result metadata");
            }
        }
    }

    private static OperationValue row(List<QueryDefinition.Column> columns, IntFunction<Object> values) {
        Map<String, OperationValue> fields = new LinkedHashMap<>();
        for (int i = 0; i < columns.size(); i++) {
            QueryDefinition.Column c = columns.get(i);
            fields.put(c.langName(), value(values.apply(i), c));
        }
        return new OperationValue.Obj(fields);
    }

    static OperationValue value(Object v, QueryDefinition.Column c) {
        if (v == null) {
            if (!c.nullable()) {
                throw failed("registered query returned null for a non-nullable column");
            }
            return OperationValue.Null.INSTANCE;
        }
        switch (c.type()) {
            case "string", "blob_ref" -> {
                if (v instanceof String s) {
                    return new OperationValue.Text(s);
                }
            }
            case "integer" -> {
                if (v instanceof Long || v instanceof Integer || v instanceof Short) {
                    long l = ((Number) v).longValue();
                    if (Math.abs((double) l) <= MAX_SAFE) {
                        return new OperationValue.Number(l);
                    }
                } else if (v instanceof Boolean b) {
                    return new OperationValue.Number(b ? 1 : 0);
                } else if (v instanceof BigDecimal d) {
                    if (d.stripTrailingZeros().scale() <= 0 && d.abs().doubleValue() <= MAX_SAFE) {
                        return new OperationValue.Number(d.longValue());
                    }
                }
            }
            case "float" -> {
                if (v instanceof Number n && Double.isFinite(n.doubleValue())) {
                    return new OperationValue.Number(n.doubleValue());
                }
            }
            case "boolean" -> {
                if (v instanceof Boolean b) {
                    return new OperationValue.Bool(b);
                }
                if (v instanceof Number n && Double.isFinite(n.doubleValue())) {
                    return new OperationValue.Bool(n.doubleValue() != 0);
                }
            }
            case "json" -> {
                String text = v instanceof String s ? s : v.toString();
                try {
                    Json.readTree(text);
                    return new OperationValue.Text(text);
                } catch (Exception e) {
                    throw failed("registered query returned invalid JSON");
                }
            }
            case "bytes", "crdt" -> {
                if (v instanceof Buffer b) {
                    return new OperationValue.Bytes(b.getBytes());
                }
                if (v instanceof io.vertx.mutiny.core.buffer.Buffer b) {
                    return new OperationValue.Bytes(b.getBytes());
                }
            }
            default -> {}
        }
        throw failed("registered query returned a value of another type than its column");
    }

    private static OperationException failed(String message) {
        return new OperationException(OperationErrorCode.QUERY_FAILED, message);
    }
}
