package dev.syncular.server.sync;

/**
 * A row as currently stored, as far as push needs it (§2.2): full values in declaration order, the row's
 * {@code server_version} and per-column {@code column_version}s.
 */
public record StoredRowState(Object[] values, long serverVersion, long[] columnVersions) {}
