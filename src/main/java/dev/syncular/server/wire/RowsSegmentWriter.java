package dev.syncular.server.wire;

/**
 * Writes an SSG2 rows segment (§5.2) incrementally: header first, then self-delimiting blocks of about
 * 1,000 rows or 256 KiB (whichever comes first), then the mandatory end marker. Only the current block
 * is held in memory; completed bytes go to the sink.
 */
public final class RowsSegmentWriter {
    /** Receives encoded bytes in order. */
    @FunctionalInterface
    public interface Sink {
        void write(byte[] bytes, int offset, int length);
    }

    public static final int TARGET_BLOCK_ROWS = 1000;
    public static final int TARGET_BLOCK_BYTES = 256 * 1024;

    private final Sink sink;
    private final RowCodec codec;
    private final WireWriter block = new WireWriter(64 * 1024);
    private final WireWriter head = new WireWriter(16);
    private int blockRows;
    private long totalRows;
    private long totalBytes;
    private boolean finished;

    public RowsSegmentWriter(String table, int schemaVersion, RowLayout columns, Sink sink) {
        this.sink = sink;
        this.codec = new RowCodec(columns);
        WireWriter h = new WireWriter(64 + columns.size() * 16);
        h.raw(RowsSegment.MAGIC)
                .u16(RowsSegment.FORMAT_VERSION)
                .u16(0)
                .str(table)
                .i32(schemaVersion)
                .u16(columns.size());
        for (ColumnDef c : columns.columns()) {
            h.str(c.name()).u8(c.type().tag).u8(c.nullable() ? 1 : 0);
        }
        emit(h);
    }

    private void emit(WireWriter w) {
        sink.write(w.array(), 0, w.size());
        totalBytes += w.size();
    }

    public void addRow(long serverVersion, Object[] values) {
        if (finished) {
            throw new IllegalStateException("segment already finished");
        }
        if (serverVersion < 1) {
            throw new IllegalArgumentException("serverVersion must be at least 1");
        }
        block.i64(serverVersion);
        codec.encode(block, values);
        blockRows++;
        totalRows++;
        if (blockRows >= TARGET_BLOCK_ROWS || block.size() >= TARGET_BLOCK_BYTES) {
            flushBlock();
        }
    }

    /** Closes the current block (no-op when empty). */
    public void flushBlock() {
        if (blockRows == 0) {
            return;
        }
        head.reset();
        head.u32(blockRows).u32(block.size());
        emit(head);
        emit(block);
        block.reset();
        blockRows = 0;
    }

    /** Flushes the last block and writes the end marker ({@code rowCount = 0}). */
    public void finish() {
        if (finished) {
            return;
        }
        flushBlock();
        head.reset();
        head.u32(0);
        emit(head);
        finished = true;
    }

    public long rowCount() {
        return totalRows;
    }

    public long byteCount() {
        return totalBytes;
    }
}
