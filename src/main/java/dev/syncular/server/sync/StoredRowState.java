package dev.syncular.server.sync;

/**
 * A row as currently stored, as far as push needs it (§2.2): full values in declaration order, the row's
 * {@code server_version} and per-column {@code column_version}s.
 */
public record StoredRowState(Object[] values, long serverVersion, long[] columnVersions) {
    /** A row stored without column versions reads as every column at the row's current version (§2.2). */
    public static StoredRowState withoutColumnVersions(Object[] values, long serverVersion) {
        long[] cv = new long[values.length];
        java.util.Arrays.fill(cv, serverVersion);
        return new StoredRowState(values, serverVersion, cv);
    }
}
