package dev.syncular.server.storage;

import java.util.Map;
import java.util.Objects;

/**
 * One entry of the blob reference index (§5.9.4): a row that currently references a blob through a
 * {@code blob_ref} column, with the row's stored scopes (§3.1) for the download authorization (§5.9.5).
 */
public record BlobReference(String table, String rowId, Map<String, String> scopes) {
    public BlobReference {
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(rowId, "rowId");
        scopes = Map.copyOf(scopes);
    }
}
