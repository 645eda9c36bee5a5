package dev.syncular.server.sync;

import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.wire.CanonicalJson;
import dev.syncular.server.wire.ColumnDef;
import dev.syncular.server.wire.RowLayout;
import dev.syncular.server.wire.RowsSegmentWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Encodes one rows segment (§5.2) row by row, in the client's codec (§9), and names it by its content
 * address (§5.1). The segment's blocks are kept as they come (each at most about 256 KiB) and joined once, into
 * an array of the segment's size, when the page is finished: no buffer doubling up to the size of a 50,000-row
 * page (several megabytes, copied at each step, and too large to stay in the young generation when a collection
 * catches it half-written).
 */
final class RowsPageEncoder {
    /** A page as SSG2 bytes with its content address (§5.1), its row count and the row cursor after it. */
    record EncodedPage(EncodedSegment segment, int count, String next) {}

    /** A rows segment's bytes and content address (§5.1). */
    record EncodedSegment(byte[] bytes, String segmentId) {}

    private final List<ColumnDef> columns;
    /** The segment's bytes so far, in the order written. */
    private final List<byte[]> chunks = new ArrayList<>();

    private long size;
    private final RowsSegmentWriter writer;
    int count;
    private String last;

    RowsPageEncoder(TableSchema table, int schemaVersion) {
        columns = table.rowLayout().columns();
        writer = new RowsSegmentWriter(table.name(), schemaVersion, RowLayout.of(columns), this::append);
    }

    void addAll(List<StoredRow> rows) {
        for (StoredRow r : rows) {
            writer.addRow(r.serverVersion(), ClientRows.narrow(r.values(), columns.size()));
            last = r.rowId();
            count++;
        }
    }

    private void append(byte[] bytes, int offset, int length) {
        chunks.add(Arrays.copyOfRange(bytes, offset, offset + length));
        size += length;
    }

    /** @param more whether rows follow this page (its last row id becomes the resume cursor) */
    EncodedPage finish(boolean more) {
        writer.finish();
        if (size > Integer.MAX_VALUE - 16) {
            throw new IllegalStateException("a rows segment exceeds 2 GiB");
        }
        byte[] bytes = new byte[(int) size];
        int at = 0;
        for (byte[] chunk : chunks) {
            System.arraycopy(chunk, 0, bytes, at, chunk.length);
            at += chunk.length;
        }
        chunks.clear();
        return new EncodedPage(
                new EncodedSegment(bytes, "sha256:" + CanonicalJson.sha256Hex(bytes)), count, more ? last : null);
    }
}
