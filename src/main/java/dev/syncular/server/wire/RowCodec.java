package dev.syncular.server.wire;

/**
 * The generated full-row codec of §2.4 for one row layout: a null bitmap of {@code ceil(n/8)} bytes
 * (LSB-first, padding bits zero) followed by the non-null values in declaration order. Used for
 * {@code COMMIT} change payloads (§4.5), rows-segment rows (§5.2) and conflict {@code serverRow}s (§6.3).
 *
 * <p>Values are Java objects by column type: {@code string} → {@link String}, {@code integer} →
 * {@link Long}, {@code float} → {@link Double}, {@code boolean} → {@link Boolean}, {@code json} and
 * {@code blob_ref} → {@link String} holding the raw JSON text, {@code bytes} and {@code crdt} →
 * {@code byte[]}; {@code null} is SQL NULL.
 */
public final class RowCodec {
    private final RowLayout layout;
    private final ColumnDef[] cols;
    private final int bitmapBytes;

    public RowCodec(RowLayout layout) {
        this.layout = layout;
        this.cols = layout.columns().toArray(new ColumnDef[0]);
        this.bitmapBytes = RowLayout.bitmapBytes(cols.length);
    }

    public RowLayout layout() {
        return layout;
    }

    /** Decodes one row starting at the reader's position. */
    public Object[] decode(WireReader r) {
        int n = cols.length;
        byte[] bitmap = new byte[bitmapBytes];
        for (int b = 0; b < bitmapBytes; b++) {
            bitmap[b] = (byte) r.u8();
        }
        checkPadding(bitmap, n, "null bitmap padding bit set");
        Object[] out = new Object[n];
        for (int i = 0; i < n; i++) {
            if ((bitmap[i >>> 3] & (1 << (i & 7))) != 0) {
                if (!cols[i].nullable()) {
                    throw WireException.invalid("null bit set for a non-nullable column");
                }
                continue;
            }
            out[i] = readValue(r, cols[i].type());
        }
        return out;
    }

    /** Decodes a row that must occupy exactly {@code bytes}. */
    public Object[] decode(byte[] bytes) {
        WireReader r = new WireReader(bytes);
        Object[] row = decode(r);
        if (r.hasRemaining()) {
            throw WireException.invalid("trailing bytes after row");
        }
        return row;
    }

    public void encode(WireWriter w, Object[] values) {
        int n = cols.length;
        if (values.length != n) {
            throw new IllegalArgumentException("row has the wrong number of columns");
        }
        for (int b = 0; b < bitmapBytes; b++) {
            int bits = 0;
            for (int k = 0; k < 8; k++) {
                int i = (b << 3) + k;
                if (i < n && values[i] == null) {
                    if (!cols[i].nullable()) {
                        throw new IllegalArgumentException("null value for a non-nullable column");
                    }
                    bits |= 1 << k;
                }
            }
            w.u8(bits);
        }
        for (int i = 0; i < n; i++) {
            if (values[i] != null) {
                writeValue(w, cols[i].type(), values[i]);
            }
        }
    }

    public byte[] encode(Object[] values) {
        WireWriter w = new WireWriter(64);
        encode(w, values);
        return w.toByteArray();
    }

    static void checkPadding(byte[] bitmap, int bits, String message) {
        if (bitmap.length == 0) {
            return;
        }
        int used = bits & 7;
        if (used != 0 && (bitmap[bitmap.length - 1] & (0xff << used) & 0xff) != 0) {
            throw WireException.invalid(message);
        }
    }

    static Object readValue(WireReader r, ColumnType type) {
        switch (type) {
            case STRING:
                return r.str();
            case INTEGER:
                return r.i64();
            case FLOAT:
                return r.f64();
            case BOOLEAN:
                return r.bool();
            case JSON:
                return r.json();
            case BLOB_REF: {
                String s = r.str();
                BlobRefShape.require(s);
                return s;
            }
            case BYTES:
            case CRDT:
                return r.bytes();
            default:
                throw WireException.invalid("unknown column type");
        }
    }

    static void writeValue(WireWriter w, ColumnType type, Object v) {
        try {
            switch (type) {
                case STRING:
                case JSON:
                case BLOB_REF:
                    w.str((String) v);
                    return;
                case INTEGER:
                    w.i64(((Number) v).longValue());
                    return;
                case FLOAT:
                    w.f64(((Number) v).doubleValue());
                    return;
                case BOOLEAN:
                    w.bool((Boolean) v);
                    return;
                case BYTES:
                case CRDT:
                    w.bytes((byte[]) v);
                    return;
                default:
                    throw new IllegalArgumentException("unknown column type");
            }
        } catch (ClassCastException e) {
            throw new IllegalArgumentException("value does not match its column type", e);
        }
    }
}
