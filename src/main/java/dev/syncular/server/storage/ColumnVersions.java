package dev.syncular.server.storage;

import java.io.ByteArrayOutputStream;
import java.util.Arrays;

/**
 * The {@code _sync_column_versions} blob (§2.2): {@code (ordinal, version)} unsigned LEB128 varint pairs,
 * ordinals ascending, for the columns whose version exceeds 1. Ordinals are column positions in schema-IR
 * declaration order. A {@code null} blob (a row stored before column versions existed) reads as every
 * column at the row's current server_version; an empty blob means every column is at version 1.
 */
public final class ColumnVersions {
    private ColumnVersions() {}

    /** Encodes per-column versions; never returns {@code null} (empty array when all are ≤ 1). */
    public static byte[] encode(long[] versions) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < versions.length; i++) {
            if (versions[i] > 1) {
                writeVarint(out, i);
                writeVarint(out, versions[i]);
            }
        }
        return out.toByteArray();
    }

    /**
     * Decodes a blob for a table of {@code columnCount} columns. {@code null} ⇒ every column at
     * {@code serverVersion}. Ordinals outside the table (a column since dropped from the layout) are ignored.
     */
    public static long[] decode(byte[] blob, int columnCount, long serverVersion) {
        long[] v = new long[columnCount];
        if (blob == null) {
            Arrays.fill(v, serverVersion);
            return v;
        }
        Arrays.fill(v, 1L);
        int[] pos = {0};
        while (pos[0] < blob.length) {
            long ordinal = readVarint(blob, pos);
            long version = readVarint(blob, pos);
            if (ordinal < columnCount) {
                v[(int) ordinal] = version;
            }
        }
        return v;
    }

    static void writeVarint(ByteArrayOutputStream out, long value) {
        if (value < 0) {
            throw new IllegalArgumentException("negative varint");
        }
        while ((value & ~0x7FL) != 0) {
            out.write((int) ((value & 0x7F) | 0x80));
            value >>>= 7;
        }
        out.write((int) value);
    }

    static long readVarint(byte[] b, int[] pos) {
        long result = 0;
        int shift = 0;
        while (true) {
            if (pos[0] >= b.length || shift > 63) {
                throw new IllegalArgumentException("truncated column-version varint");
            }
            int x = b[pos[0]++] & 0xFF;
            result |= (long) (x & 0x7F) << shift;
            if ((x & 0x80) == 0) {
                return result;
            }
            shift += 7;
        }
    }
}
