package dev.syncular.server.sync;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.sync.PushOperations.Rejection;
import dev.syncular.server.wire.CanonicalJson;
import dev.syncular.server.wire.OpResult;
import dev.syncular.server.wire.SparseRow;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The size caps of one pushed row (issue 45): a row whose encoded payload exceeds {@link SyncLimits#maxRowBytes},
 * or with one value above {@link SyncLimits#maxValueBytes}, is rejected at push time, before its row is read, with
 * §10 {@code sync.constraint_violation} (a server-side data constraint; not retryable) and §6.3.1 details naming
 * the reason ({@code row_too_large} or {@code value_too_large}), the column in {@code fieldPaths}, and the table,
 * the size and the cap in {@code references}. One oversized row would otherwise be stored, logged and sent in
 * every bootstrap and delta of its scope, for every subscriber.
 */
final class RowSizeCap {
    private RowSizeCap() {}

    /**
     * The rejection of operation {@code index} when its encoded payload is over the row cap, else {@code null};
     * checked before the row is decoded, so an oversized row is never copied into values.
     */
    static Rejection checkPayload(int index, TableSchema table, int payloadBytes, SyncLimits limits) {
        return payloadBytes > limits.maxRowBytes()
                ? rejection(index, "row_too_large", table, null, payloadBytes, limits.maxRowBytes())
                : null;
    }

    /** The rejection of operation {@code index} when one of its decoded row's values is over the value cap. */
    static Rejection checkValues(int index, TableSchema table, SparseRow row, SyncLimits limits) {
        for (int i = 0; i < table.columnCount() && i < row.values().length; i++) {
            if (!row.isPresent(i)) {
                continue;
            }
            long bytes = bytes(row.value(i), limits.maxValueBytes());
            if (bytes > limits.maxValueBytes()) {
                return rejection(
                        index, "value_too_large", table, table.column(i).name(), bytes, limits.maxValueBytes());
            }
        }
        return null;
    }

    /** A value's size in bytes (text as UTF-8, counted exactly only when it might pass {@code cap}). */
    private static long bytes(Object value, long cap) {
        if (value instanceof String s) {
            return (long) s.length() * 3 <= cap ? s.length() : s.getBytes(StandardCharsets.UTF_8).length;
        }
        if (value instanceof byte[] b) {
            return b.length;
        }
        return 0;
    }

    private static Rejection rejection(
            int index, String reason, TableSchema table, String column, long bytes, long cap) {
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("reason", reason);
        if (column != null) {
            details.put("fieldPaths", List.of(column));
        }
        Map<String, String> references = new LinkedHashMap<>();
        references.put("table", table.name());
        references.put("bytes", Long.toString(bytes));
        references.put("limit", Long.toString(cap));
        details.put("references", references);
        return new Rejection(
                new OpResult.Error(
                        index,
                        ErrorCode.CONSTRAINT_VIOLATION.code,
                        column == null ? "row exceeds the row size cap" : "a value exceeds the value size cap",
                        ErrorCode.CONSTRAINT_VIOLATION.retryable),
                CanonicalJson.write(details));
    }
}
