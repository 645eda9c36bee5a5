package dev.syncular.server.wire;

/**
 * The sparse push row of §2.4 (RFC §6.1): a presence bitmap over all columns, a null bitmap over the
 * present columns, then the non-null present values in declaration order. Decode validates in the
 * spec's order: presence padding, primary-key presence, null-bitmap padding, non-nullable nulls.
 */
public final class SparseRowCodec {
    private final RowLayout layout;
    private final ColumnDef[] cols;

    public SparseRowCodec(RowLayout layout) {
        if (layout.primaryKeyIndex() < 0) {
            throw new IllegalArgumentException("sparse rows need a primary-key column");
        }
        this.layout = layout;
        this.cols = layout.columns().toArray(new ColumnDef[0]);
    }

    public RowLayout layout() {
        return layout;
    }

    public SparseRow decode(byte[] payload) {
        WireReader r = new WireReader(payload);
        int n = cols.length;
        byte[] presence = new byte[RowLayout.bitmapBytes(n)];
        for (int b = 0; b < presence.length; b++) {
            presence[b] = (byte) r.u8();
        }
        RowCodec.checkPadding(presence, n, "presence bitmap padding bit set");
        boolean[] present = new boolean[n];
        int presentCount = 0;
        for (int i = 0; i < n; i++) {
            if ((presence[i >>> 3] & (1 << (i & 7))) != 0) {
                present[i] = true;
                presentCount++;
            }
        }
        if (!present[layout.primaryKeyIndex()]) {
            throw WireException.invalid("primary-key column absent from sparse row");
        }
        byte[] nulls = new byte[RowLayout.bitmapBytes(presentCount)];
        for (int b = 0; b < nulls.length; b++) {
            nulls[b] = (byte) r.u8();
        }
        RowCodec.checkPadding(nulls, presentCount, "null bit set for an absent column");
        Object[] values = new Object[n];
        boolean[] isNull = new boolean[n];
        int j = 0;
        for (int i = 0; i < n; i++) {
            if (!present[i]) {
                continue;
            }
            if ((nulls[j >>> 3] & (1 << (j & 7))) != 0) {
                if (!cols[i].nullable()) {
                    throw WireException.invalid("null bit set for a non-nullable column");
                }
                isNull[i] = true;
            }
            j++;
        }
        for (int i = 0; i < n; i++) {
            if (present[i] && !isNull[i]) {
                values[i] = RowCodec.readValue(r, cols[i].type());
            }
        }
        if (r.hasRemaining()) {
            throw WireException.invalid("trailing bytes after sparse row");
        }
        return new SparseRow(present, values);
    }

    public byte[] encode(SparseRow row) {
        int n = cols.length;
        if (row.present().length != n) {
            throw new IllegalArgumentException("sparse row has the wrong number of columns");
        }
        if (!row.present()[layout.primaryKeyIndex()]) {
            throw new IllegalArgumentException("sparse row must carry the primary key");
        }
        WireWriter w = new WireWriter(64);
        int presentCount = 0;
        for (int b = 0; b < RowLayout.bitmapBytes(n); b++) {
            int bits = 0;
            for (int k = 0; k < 8; k++) {
                int i = (b << 3) + k;
                if (i < n && row.present()[i]) {
                    bits |= 1 << k;
                    presentCount++;
                }
            }
            w.u8(bits);
        }
        int nullBits = 0;
        int j = 0;
        for (int i = 0; i < n; i++) {
            if (!row.present()[i]) {
                continue;
            }
            if (row.values()[i] == null) {
                if (!cols[i].nullable()) {
                    throw new IllegalArgumentException("null value for a non-nullable column");
                }
                nullBits |= 1 << (j & 7);
            }
            j++;
            if ((j & 7) == 0) {
                w.u8(nullBits);
                nullBits = 0;
            }
        }
        if ((presentCount & 7) != 0) {
            w.u8(nullBits);
        }
        for (int i = 0; i < n; i++) {
            if (row.present()[i] && row.values()[i] != null) {
                RowCodec.writeValue(w, cols[i].type(), row.values()[i]);
            }
        }
        return w.toByteArray();
    }
}
