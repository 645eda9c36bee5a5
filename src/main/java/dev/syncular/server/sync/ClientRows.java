package dev.syncular.server.sync;

import dev.syncular.server.wire.RowLayout;
import dev.syncular.server.wire.SparseRow;
import java.util.Arrays;

/**
 * §9 appended columns between the current schema and an older client's row codec: pushed rows are widened
 * (the appended columns absent), served rows and conflict bitmaps narrowed (the appended columns dropped).
 */
final class ClientRows {
    private ClientRows() {}

    /** §9: an older client's sparse row over the current schema — appended columns are absent. */
    static SparseRow widen(SparseRow row, int columns) {
        if (row.present().length == columns) {
            return row;
        }
        boolean[] present = Arrays.copyOf(row.present(), columns);
        Object[] values = Arrays.copyOf(row.values(), columns);
        return new SparseRow(present, values);
    }

    /**
     * §9 "new nullable columns are null on insert": a widened row whose client codec has {@code clientColumns}
     * columns, with the columns appended after them present and null — an older client's insert of its whole row
     * is a whole row of the current schema.
     */
    static SparseRow nullAppended(SparseRow row, int clientColumns) {
        int columns = row.present().length;
        if (clientColumns >= columns) {
            return row;
        }
        boolean[] present = row.present().clone();
        Object[] values = row.values().clone();
        for (int i = clientColumns; i < columns; i++) {
            present[i] = true;
            values[i] = null;
        }
        return new SparseRow(present, values);
    }

    /** §9: a current row in an older client's codec — the appended columns are dropped. */
    static Object[] narrow(Object[] values, int columns) {
        return values.length == columns ? values : Arrays.copyOf(values, columns);
    }

    static byte[] narrowBitmap(byte[] bitmap, int columns) {
        byte[] out = Arrays.copyOf(bitmap, RowLayout.bitmapBytes(columns));
        if ((columns & 7) != 0 && out.length > 0) {
            out[out.length - 1] &= (byte) ((1 << (columns & 7)) - 1);
        }
        return out;
    }
}
