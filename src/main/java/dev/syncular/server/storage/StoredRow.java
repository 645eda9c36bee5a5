package dev.syncular.server.storage;

import java.util.Map;
import java.util.Objects;

/**
 * The current projection of one synced row (§2.2).
 *
 * @param rowId          the row id
 * @param serverVersion  the row's server_version (≥ 1)
 * @param values         the row in declaration order (Java objects per column type)
 * @param columnVersions per-column column_version in declaration order; decoded from the
 *                       {@code _sync_column_versions} blob (absent blob ⇒ every column at serverVersion)
 * @param scopes         stored scopes, variable → value (§3.1)
 */
public record StoredRow(
        String rowId, long serverVersion, Object[] values, long[] columnVersions, Map<String, String> scopes) {
    public StoredRow {
        Objects.requireNonNull(rowId, "rowId");
        Objects.requireNonNull(values, "values");
        Objects.requireNonNull(columnVersions, "columnVersions");
        scopes = Map.copyOf(scopes);
    }
}
