package dev.syncular.server.wire;

import java.util.ArrayList;
import java.util.List;

/**
 * Reads an SSG2 rows segment (§5.2) block by block, holding only the header and the current block.
 * Structural failures — magic, version, flags, column flags and tags, block length mismatch,
 * {@code serverVersion < 1}, row-codec violations, truncation, missing end marker, trailing bytes —
 * are {@code sync.invalid_request}.
 */
public final class RowsSegmentReader {
    private final WireReader r;
    private final String table;
    private final int schemaVersion;
    private final RowLayout columns;
    private final RowCodec codec;
    private boolean ended;

    public RowsSegmentReader(WireReader r) {
        this.r = r;
        for (byte m : RowsSegment.MAGIC) {
            if ((byte) r.u8() != m) {
                throw WireException.invalid("rows segment magic mismatch");
            }
        }
        if (r.u16() != RowsSegment.FORMAT_VERSION) {
            throw WireException.invalid("unsupported rows segment formatVersion");
        }
        if (r.u16() != 0) {
            throw WireException.invalid("rows segment flags must be zero");
        }
        table = r.str();
        schemaVersion = r.i32();
        int n = r.u16();
        if ((long) n * 6 > r.remaining()) {
            throw WireException.invalid("column count exceeds remaining bytes");
        }
        List<ColumnDef> cols = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            String name = r.str();
            ColumnType type = ColumnType.ofTag(r.u8());
            int flags = r.u8();
            if ((flags & ~1) != 0) {
                throw WireException.invalid("reserved column flag bits set");
            }
            cols.add(new ColumnDef(name, type, (flags & 1) != 0));
        }
        columns = RowLayout.of(cols);
        codec = new RowCodec(columns);
    }

    public String table() {
        return table;
    }

    public int schemaVersion() {
        return schemaVersion;
    }

    public RowLayout columns() {
        return columns;
    }

    /** The next block's rows, or {@code null} after the end marker (which must be the last bytes). */
    public List<SegmentRow> nextBlock() {
        if (ended) {
            return null;
        }
        // A row record is at least its serverVersion and null bitmap (an all-NULL row; 8 bytes with no columns).
        int rowCount = r.count(8 + RowLayout.bitmapBytes(columns.size()));
        if (rowCount == 0) {
            ended = true;
            if (r.hasRemaining()) {
                throw WireException.invalid("trailing bytes after the end marker");
            }
            return null;
        }
        int byteLength = r.count(1);
        int end = r.position() + byteLength;
        List<SegmentRow> rows = new ArrayList<>(Math.min(rowCount, byteLength / 8));
        for (int i = 0; i < rowCount; i++) {
            long serverVersion = r.i64();
            if (serverVersion < 1) {
                throw WireException.invalid("row serverVersion must be at least 1");
            }
            rows.add(new SegmentRow(serverVersion, codec.decode(r)));
            if (r.position() > end) {
                throw WireException.invalid("block rows overrun byteLength");
            }
        }
        if (r.position() != end) {
            throw WireException.invalid("block rows do not consume byteLength");
        }
        return rows;
    }
}
