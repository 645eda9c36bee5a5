package dev.syncular.server.sync;

import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.wire.CanonicalJson;
import dev.syncular.server.wire.ColumnDef;
import dev.syncular.server.wire.RowLayout;
import dev.syncular.server.wire.RowsSegmentWriter;
import dev.syncular.server.wire.WireWriter;
import java.util.List;

/**
 * Encodes one rows segment (§5.2) row by row, in the client's codec (§9), and names it by its content
 * address (§5.1).
 */
final class RowsPageEncoder {
    /** A page as SSG2 bytes with its content address (§5.1), its row count and the row cursor after it. */
    record EncodedPage(EncodedSegment segment, int count, String next) {}

    /** A rows segment's bytes and content address (§5.1). */
    record EncodedSegment(byte[] bytes, String segmentId) {}

    private final List<ColumnDef> columns;
    private final WireWriter out = new WireWriter(16 * 1024);
    private final RowsSegmentWriter writer;
    int count;
    private String last;

    RowsPageEncoder(TableSchema table, int schemaVersion) {
        columns = table.rowLayout().columns();
        writer = new RowsSegmentWriter(table.name(), schemaVersion, RowLayout.of(columns), out::raw);
    }

    void addAll(List<StoredRow> rows) {
        for (StoredRow r : rows) {
            writer.addRow(r.serverVersion(), ClientRows.narrow(r.values(), columns.size()));
            last = r.rowId();
            count++;
        }
    }

    /** @param more whether rows follow this page (its last row id becomes the resume cursor) */
    EncodedPage finish(boolean more) {
        writer.finish();
        byte[] bytes = out.toByteArray();
        return new EncodedPage(
                new EncodedSegment(bytes, "sha256:" + CanonicalJson.sha256Hex(bytes)), count, more ? last : null);
    }
}
