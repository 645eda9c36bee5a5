package dev.syncular.server.storage;

import dev.syncular.server.wire.Op;
import java.util.Map;
import java.util.Objects;

/**
 * One change the engine appends to the log (§2.2). The storage does not decide anything about it: it
 * stores the row payload (encoded with the table's full-row codec, §2.4) and indexes the stored scopes
 * under the commit→scope-key inverted index (§3.1).
 *
 * @param table      the synced table name
 * @param rowId      the primary key rendered as a string
 * @param op         upsert or delete
 * @param rowVersion the row's server_version after the write; {@code null} for delete
 * @param scopes     stored scopes, variable → value (§3.1); never null (a missing map is {@code sync.missing_scopes})
 * @param row        the full row after the write in declaration order (upsert); {@code null} for delete
 */
public record ChangeToWrite(
        String table, String rowId, Op op, Long rowVersion, Map<String, String> scopes, Object[] row) {
    public ChangeToWrite {
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(rowId, "rowId");
        Objects.requireNonNull(op, "op");
        scopes = scopes == null ? null : Map.copyOf(scopes);
        if (op == Op.UPSERT && (row == null || rowVersion == null)) {
            throw new IllegalArgumentException("an upsert change carries a row and a rowVersion");
        }
        row = row == null ? null : row.clone();
    }

    public static ChangeToWrite upsert(
            String table, String rowId, long rowVersion, Map<String, String> scopes, Object[] row) {
        return new ChangeToWrite(table, rowId, Op.UPSERT, rowVersion, scopes, row);
    }

    public static ChangeToWrite delete(String table, String rowId, Map<String, String> scopes) {
        return new ChangeToWrite(table, rowId, Op.DELETE, null, scopes, null);
    }

    @Override
    public Object[] row() {
        return row == null ? null : row.clone();
    }
}
