package dev.syncular.server.storage;

import dev.syncular.server.wire.Op;
import java.util.Map;
import java.util.Objects;

/**
 * One change read back from the log (§2.2, §4.5).
 *
 * @param table      the table name
 * @param rowId      the row id
 * @param op         upsert or delete
 * @param rowVersion the server_version after the write; {@code null} for delete
 * @param scopes     stored scopes, variable → value (§3.1)
 * @param row        the full row (declaration order of the stored schema) for upsert, {@code null} for delete;
 *                   values are Java objects per column type (String, Long, Double, Boolean, String for
 *                   json/blob_ref, byte[] for bytes/crdt, null)
 */
public record StoredChange(
        String table, String rowId, Op op, Long rowVersion, Map<String, String> scopes, Object[] row) {
    public StoredChange {
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(rowId, "rowId");
        Objects.requireNonNull(op, "op");
        scopes = Map.copyOf(scopes);
    }
}
