package dev.syncular.server.wire;

import java.util.List;

/**
 * The positional column table a row codec is generated from (§2.4): columns in schema-IR declaration
 * order, and the primary-key column index ({@code -1} where none applies, as in a standalone SSG2
 * column table).
 */
public final class RowLayout {
    private final List<ColumnDef> columns;
    private final ColumnDef[] columnArray;
    private final int primaryKeyIndex;

    public RowLayout(List<ColumnDef> columns, int primaryKeyIndex) {
        this.columns = List.copyOf(columns);
        this.columnArray = this.columns.toArray(new ColumnDef[0]);
        if (primaryKeyIndex < -1 || primaryKeyIndex >= columnArray.length) {
            throw new IllegalArgumentException("primary key index out of range");
        }
        this.primaryKeyIndex = primaryKeyIndex;
    }

    public static RowLayout of(List<ColumnDef> columns) {
        return new RowLayout(columns, -1);
    }

    public List<ColumnDef> columns() {
        return columns;
    }

    public int size() {
        return columnArray.length;
    }

    public ColumnDef column(int index) {
        return columnArray[index];
    }

    public int primaryKeyIndex() {
        return primaryKeyIndex;
    }

    /** Index of the named column, or {@code -1}. */
    public int indexOf(String name) {
        for (int i = 0; i < columnArray.length; i++) {
            if (columnArray[i].name().equals(name)) {
                return i;
            }
        }
        return -1;
    }

    /** Byte width of a bitmap over {@code bits} positions: {@code ceil(bits / 8)}. */
    public static int bitmapBytes(int bits) {
        return (bits + 7) >>> 3;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RowLayout other
                && other.primaryKeyIndex == primaryKeyIndex
                && other.columns.equals(columns);
    }

    @Override
    public int hashCode() {
        return columns.hashCode() * 31 + primaryKeyIndex;
    }

    @Override
    public String toString() {
        return "RowLayout" + columns;
    }
}
