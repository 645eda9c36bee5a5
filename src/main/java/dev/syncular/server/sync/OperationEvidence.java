package dev.syncular.server.sync;

import java.util.Map;

/**
 * One push operation as the write-policy seams see it (§6.7, §6.8 "operation evidence", §6.9): rows keyed by
 * decoded column name, holding the codec's Java values ({@code String}, {@code Long}, {@code Double},
 * {@code Boolean}, {@code byte[]}; {@code json} and {@code blob_ref} as their JSON text). {@code row} is the row
 * that will persist (present columns over stored ones, crdt columns already merged, §5.10.3) and {@code null} for a
 * delete; {@code stored} is the row before the operation, {@code null} for an insert or a delete of an absent row.
 *
 * @param op                  {@code "upsert"} or {@code "delete"}
 * @param storedServerVersion the stored row's {@code server_version}, or {@code null} without a stored row
 * @param nextServerVersion   the version the upsert writes, or {@code null} for a delete
 */
public record OperationEvidence(
        int opIndex,
        String op,
        String table,
        String rowId,
        Map<String, Object> row,
        Map<String, Object> stored,
        Long storedServerVersion,
        Long nextServerVersion) {
    public static final String UPSERT = "upsert";
    public static final String DELETE = "delete";

    public boolean isDelete() {
        return DELETE.equals(op);
    }
}
