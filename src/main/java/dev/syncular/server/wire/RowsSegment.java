package dev.syncular.server.wire;

import java.util.ArrayList;
import java.util.List;

/**
 * A whole SSG2 rows segment (§5.2): header, column table and row blocks. For streaming use
 * {@link RowsSegmentReader} and {@link RowsSegmentWriter}; this value form serves tooling, vectors and
 * small inline segments.
 */
public record RowsSegment(String table, int schemaVersion, RowLayout columns, List<List<SegmentRow>> blocks) {
    public static final byte[] MAGIC = {0x53, 0x53, 0x47, 0x32};
    public static final int FORMAT_VERSION = 1;

    /** Decodes and structurally validates a complete segment (every §5.2 decode failure is {@code sync.invalid_request}). */
    public static RowsSegment decode(byte[] bytes) {
        RowsSegmentReader reader = new RowsSegmentReader(new WireReader(bytes));
        List<List<SegmentRow>> blocks = new ArrayList<>();
        List<SegmentRow> block;
        while ((block = reader.nextBlock()) != null) {
            blocks.add(block);
        }
        return new RowsSegment(reader.table(), reader.schemaVersion(), reader.columns(), List.copyOf(blocks));
    }

    public byte[] encode() {
        WireWriter out = new WireWriter(1024);
        RowsSegmentWriter w = new RowsSegmentWriter(table, schemaVersion, columns, out::raw);
        for (List<SegmentRow> block : blocks) {
            for (SegmentRow row : block) {
                w.addRow(row.serverVersion(), row.values());
            }
            w.flushBlock();
        }
        w.finish();
        return out.toByteArray();
    }

    public int rowCount() {
        int n = 0;
        for (List<SegmentRow> b : blocks) {
            n += b.size();
        }
        return n;
    }
}
