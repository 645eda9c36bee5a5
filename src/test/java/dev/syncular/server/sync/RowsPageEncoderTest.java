package dev.syncular.server.sync;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.wire.CanonicalJson;
import dev.syncular.server.wire.RowsSegment;
import dev.syncular.server.wire.RowsSegmentWriter;
import dev.syncular.server.wire.SegmentRow;
import dev.syncular.server.wire.WireWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** §5.2 rows segments as a bootstrap page writes them, §5.1 their content address. */
class RowsPageEncoderTest {
    /** The benchmarks' {@code notes} table: id, project_id, title, body, priority, done. */
    private static final TableSchema NOTES =
            SchemaLoader.load(Path.of("src/test/resources/schema/notes.json")).table("notes");

    /**
     * A page of 2,600 rows, some of them 200 KiB, so blocks end both at 1,000 rows and at 256 KiB: the page's
     * bytes are exactly the segment one writer produces into one buffer, named by their SHA-256, and decode to
     * the rows in order.
     */
    @Test
    void aPageIsTheSegmentOfItsRowsWhateverItsBlocks() {
        List<StoredRow> rows = new ArrayList<>();
        for (int i = 0; i < 2600; i++) {
            String id = String.format("n-%05d", i);
            String title = i % 500 == 7 ? "x".repeat(200 * 1024) : (i % 3 == 0 ? null : "title " + i);
            Object[] values = {id, "p1", title, i % 5 == 0 ? null : "body", (long) i, i % 2 == 0};
            rows.add(new StoredRow(id, 1 + i, values, new long[0], Map.of()));
        }
        RowsPageEncoder encoder = new RowsPageEncoder(NOTES, 1);
        encoder.addAll(rows.subList(0, 1700));
        encoder.addAll(rows.subList(1700, 2600));
        RowsPageEncoder.EncodedPage page = encoder.finish(true);

        WireWriter whole = new WireWriter();
        RowsSegmentWriter w = new RowsSegmentWriter("notes", 1, NOTES.rowLayout(), whole::raw);
        for (StoredRow r : rows) {
            w.addRow(r.serverVersion(), r.values());
        }
        w.finish();
        assertArrayEquals(whole.toByteArray(), page.segment().bytes());
        assertEquals(
                "sha256:" + CanonicalJson.sha256Hex(page.segment().bytes()),
                page.segment().segmentId());
        assertEquals(2600, page.count());
        assertEquals("n-02599", page.next(), "the last row id resumes the bootstrap");

        RowsSegment decoded = RowsSegment.decode(page.segment().bytes());
        List<SegmentRow> all = decoded.blocks().stream().flatMap(List::stream).toList();
        assertEquals(2600, all.size());
        for (int i = 0; i < all.size(); i++) {
            assertEquals(1 + i, all.get(i).serverVersion());
            assertArrayEquals(rows.get(i).values(), all.get(i).values());
        }
        assertNull(new RowsPageEncoder(NOTES, 1).finish(false).next(), "a last page has no cursor after it");
    }
}
