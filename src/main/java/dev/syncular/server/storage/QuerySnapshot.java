package dev.syncular.server.storage;

import java.util.List;

/**
 * The result of {@link QueryReads#readSnapshot}: the statement's column names in select-list order, each row's
 * values by position as the database client reads them (text, {@code Long}/{@code Integer}/{@code Short},
 * {@code Double}/{@code Float}, {@code BigDecimal} for a {@code numeric} — {@code Double.NaN} for its NaN —,
 * {@code Boolean}, a Vert.x {@code Buffer} for {@code bytea}, JSON values for {@code json}; {@code null}), and the
 * partition's {@code maxCommitSeq} in the same snapshot.
 */
public record QuerySnapshot(List<String> columns, List<List<Object>> rows, long maxCommitSeq) {
    public QuerySnapshot {
        columns = List.copyOf(columns);
        rows = List.copyOf(rows);
    }
}
