package dev.syncular.server.storage;

import java.util.List;

/**
 * The rows of a read-only statement run inside a push transaction ({@link PushTx#queryRows}): the result's column
 * names in select-list order (empty without rows) and each row's values by position, as described there.
 */
public record QueryRows(List<String> columns, List<List<Object>> rows) {
    public QueryRows {
        columns = List.copyOf(columns);
        rows = List.copyOf(rows);
    }
}
