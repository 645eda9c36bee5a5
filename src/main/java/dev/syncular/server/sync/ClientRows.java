package dev.syncular.server.sync;

import dev.syncular.server.wire.RowLayout;
import dev.syncular.server.wire.SparseRow;
import java.util.Arrays;

/**
 * §9 appended columns between the current schema and an older client's row codec: pushed rows are widened
 * (the appended columns absent), served rows and conflict bitmaps narrowed (the appended columns dropped).
 */
final class ClientRows {
    private ClientRows() {
    }

    /** §9: an older client's sparse row over the current schema — appended columns are absent. */
    static SparseRow widen(SparseRow row, int columns) {
        if (row.present().length == columns) {
            return row;
        }
        boolean[] present = Arrays.copyOf(row.present(), columns);
        Object[] values = Arrays.copyOf(row.values(), columns);
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
