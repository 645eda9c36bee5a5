package dev.syncular.server.storage;

import java.util.List;

/**
 * One read of snapshot rows (§4.7 bootstrap pages, §5.2 rows segments, §5.3 image builds), bounded in rows and in
 * bytes: a page of 900 KB rows is 14 MB at 16 rows, and a page's row count alone does not bound a pod's memory.
 *
 * @param rows the rows in row-id byte order (not copied); at least one when any row follows the cursor
 * @param bytes what the rows hold: the sum over the rows of their row id and values (text and bytes as stored, 8 per
 *     fixed-width value), the measure the bound applies to
 * @param cut whether the rows reached the read's byte bound before its row limit (its last row is the one that reached
 *     it): fewer rows than the limit then do not mean the snapshot is exhausted. Further rows may follow, or none (a
 *     read ending with the snapshot's last row, which reached the bound, is cut too: the next read is empty)
 */
public record SnapshotRows(List<StoredRow> rows, long bytes, boolean cut) {
    /** No row. */
    public static final SnapshotRows NONE = new SnapshotRows(List.of(), 0, false);

    /** The row id of the last row (the cursor after this read); the rows must not be empty. */
    public String lastRowId() {
        return rows.get(rows.size() - 1).rowId();
    }
}
