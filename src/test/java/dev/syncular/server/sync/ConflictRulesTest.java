package dev.syncular.server.sync;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.wire.SparseRow;
import java.util.Arrays;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/** §6.2 conflict detection, §3.4 write authorization and the §5.10.3 crdt interaction. */
class ConflictRulesTest {
    private static final TableSchema NOTES = SchemaLoader.parse("""
            {"version": 1, "tables": [{"name": "notes", "primaryKey": "id",
              "columns": [
                {"name": "id", "type": "string", "nullable": false},
                {"name": "project_id", "type": "string", "nullable": false},
                {"name": "title", "type": "string", "nullable": true},
                {"name": "body", "type": "string", "nullable": true},
                {"name": "doc", "type": "crdt", "nullable": true, "crdtType": "yjs-doc"}],
              "scopes": ["project:{project_id}"]}]}""").table("notes");
    private static final Predicate<Object[]> P1_ONLY = row -> "p1".equals(row[1]);
    private static final CrdtMerger CONCAT = (type, stored, incoming) -> {
        byte[] base = stored == null ? new byte[0] : stored;
        byte[] out = Arrays.copyOf(base, base.length + incoming.length);
        System.arraycopy(incoming, 0, out, base.length, incoming.length);
        return out;
    };

    /** Stored row n-1 at version 3: title last written at 3, body at 2, doc at 1. */
    private static StoredRowState stored() {
        return new StoredRowState(new Object[] {"n-1", "p1", "t", "b", new byte[] {1}}, 3, new long[] {1, 1, 3, 2, 1});
    }

    private static SparseRow sparse(Object... idAndPairs) {
        boolean[] present = new boolean[5];
        Object[] values = new Object[5];
        present[0] = true;
        values[0] = idAndPairs[0];
        for (int i = 1; i < idAndPairs.length; i += 2) {
            int col = (Integer) idAndPairs[i];
            present[col] = true;
            values[col] = idAndPairs[i + 1];
        }
        return new SparseRow(present, values);
    }

    private static WriteOutcome upsert(SparseRow row, Long base, StoredRowState stored, boolean tombstoned) {
        return ConflictRules.upsert(NOTES, row, base, stored, tombstoned, P1_ONLY, CONCAT);
    }

    @Test
    void columnVersionsDecideConflicts() {
        // body moved to version 2: a base of 2 does not conflict on body, a base of 1 does (step 5).
        WriteOutcome clean = upsert(sparse("n-1", 3, "b2"), 2L, stored(), false);
        WriteOutcome.Apply apply = assertInstanceOf(WriteOutcome.Apply.class, clean);
        assertEquals(4, apply.serverVersion());
        assertArrayEquals(new long[] {1, 1, 3, 4, 1}, apply.columnVersions());
        assertEquals("t", apply.values()[2]);
        WriteOutcome.Conflict c = assertInstanceOf(
                WriteOutcome.Conflict.class, upsert(sparse("n-1", 2, "x", 3, "y"), 2L, stored(), false));
        assertArrayEquals(new byte[] {0b0100}, c.conflictColumns());
        assertEquals(3, c.serverVersion());
        // Unversioned upserts are last-write-wins per column (step 6).
        assertInstanceOf(WriteOutcome.Apply.class, upsert(sparse("n-1", 2, "x"), null, stored(), false));
    }

    @Test
    void lostInsertMarksEveryPresentNonCrdtColumnButThePrimaryKey() {
        WriteOutcome.Conflict c = assertInstanceOf(
                WriteOutcome.Conflict.class,
                upsert(sparse("n-1", 1, "p1", 2, "t", 3, "b", 4, new byte[] {9}), 0L, stored(), false));
        assertArrayEquals(new byte[] {0b1110}, c.conflictColumns());
        // Denied actors never see the winner (§6.2 step 4).
        WriteOutcome denied =
                ConflictRules.upsert(NOTES, sparse("n-1", 1, "p1"), 0L, stored(), false, r -> false, CONCAT);
        assertEquals(
                ErrorCode.FORBIDDEN,
                assertInstanceOf(WriteOutcome.Reject.class, denied).code());
    }

    @Test
    void crdtColumnsMergeAndNeverConflict() {
        WriteOutcome.Apply a = assertInstanceOf(
                WriteOutcome.Apply.class, upsert(sparse("n-1", 4, new byte[] {2}), 1L, stored(), false));
        assertArrayEquals(new byte[] {1, 2}, (byte[]) a.values()[4]);
        WriteOutcome noMerger = ConflictRules.upsert(
                NOTES, sparse("n-1", 4, new byte[] {2}), null, stored(), false, P1_ONLY, CrdtMerger.NONE);
        assertEquals(
                ErrorCode.CRDT_MERGE_FAILED,
                assertInstanceOf(WriteOutcome.Reject.class, noMerger).code());
    }

    @Test
    void scopeColumnsAreImmutableAndVersionsBounded() {
        assertEquals(
                ErrorCode.INVALID_REQUEST,
                assertInstanceOf(WriteOutcome.Reject.class, upsert(sparse("n-1", 1, "p2"), null, stored(), false))
                        .code());
        assertInstanceOf(WriteOutcome.Apply.class, upsert(sparse("n-1", 1, "p1"), null, stored(), false));
        assertEquals(
                ErrorCode.INVALID_REQUEST,
                assertInstanceOf(WriteOutcome.Reject.class, upsert(sparse("n-1", 2, "x"), 4L, stored(), false))
                        .code());
        // Authorization runs against the stored row, not the payload.
        WriteOutcome denied = ConflictRules.upsert(
                NOTES, sparse("n-1", 2, "x"), null, stored(), false, r -> "p9".equals(r[1]), CONCAT);
        assertEquals(
                ErrorCode.FORBIDDEN,
                assertInstanceOf(WriteOutcome.Reject.class, denied).code());
    }

    private static ErrorCode rejected(WriteOutcome outcome) {
        return assertInstanceOf(WriteOutcome.Reject.class, outcome).code();
    }

    @Test
    void absentRowsFollowTheTombstoneTable() {
        SparseRow full = sparse("n-9", 1, "p1", 2, "t", 3, null, 4, new byte[] {5});
        SparseRow patch = sparse("n-9", 2, "t");
        for (boolean tomb : new boolean[] {false, true}) {
            // baseVersion 0: explicit intent inserts at version 1 over a tombstone or none
            WriteOutcome.Apply insert = assertInstanceOf(WriteOutcome.Apply.class, upsert(full, 0L, null, tomb));
            assertEquals(1, insert.serverVersion());
            assertArrayEquals(new long[] {1, 1, 1, 1, 1}, insert.columnVersions());
            assertEquals(ErrorCode.ROW_MISSING, rejected(upsert(patch, 0L, null, tomb)));
            // baseVersion > 0: row_missing after payload authorization
            assertEquals(ErrorCode.ROW_MISSING, rejected(upsert(full, 2L, null, tomb)));
            assertEquals(ErrorCode.FORBIDDEN, rejected(upsert(patch, 2L, null, tomb)));
        }
        // absent baseVersion: the delete within the horizon wins, a partial payload included (B.20 a)
        assertEquals(ErrorCode.ROW_DELETED, rejected(upsert(full, null, null, true)));
        assertEquals(ErrorCode.ROW_DELETED, rejected(upsert(patch, null, null, true)));
        // no tombstone: every column inserts, a partial payload is row_missing (B.21 e)
        assertInstanceOf(WriteOutcome.Apply.class, upsert(full, null, null, false));
        assertEquals(ErrorCode.ROW_MISSING, rejected(upsert(patch, null, null, false)));
        assertEquals(ErrorCode.ROW_MISSING, rejected(upsert(sparse("n-9", 1, "p1"), null, null, false)));
    }

    @Test
    void everyColumnPresentIsAnInsertAuthorizedBeforeTheTableAnswers() {
        // §3.4 step 2: the payload is the insert's authorization row, checked before a tombstone or an absence is
        // disclosed; a partial payload is no insert and has none (only baseVersion > 0 authorizes it, and fails)
        SparseRow elsewhere = sparse("n-9", 1, "p2", 2, "t", 3, null, 4, new byte[] {5});
        for (boolean tomb : new boolean[] {false, true}) {
            for (Long base : new Long[] {null, 0L, 2L}) {
                assertEquals(ErrorCode.FORBIDDEN, rejected(upsert(elsewhere, base, null, tomb)), base + "/" + tomb);
            }
            assertEquals(ErrorCode.FORBIDDEN, rejected(upsert(sparse("n-9", 1, "p2"), 2L, null, tomb)));
        }
        assertEquals(ErrorCode.ROW_DELETED, rejected(upsert(sparse("n-9", 1, "p2", 2, "t"), null, null, true)));
        assertEquals(ErrorCode.ROW_MISSING, rejected(upsert(sparse("n-9", 1, "p2", 2, "t"), null, null, false)));
    }

    @Test
    void deletes() {
        assertInstanceOf(WriteOutcome.NoOp.class, ConflictRules.delete(null, r -> false));
        assertInstanceOf(WriteOutcome.Delete.class, ConflictRules.delete(stored(), P1_ONLY));
        assertEquals(
                ErrorCode.FORBIDDEN,
                assertInstanceOf(WriteOutcome.Reject.class, ConflictRules.delete(stored(), r -> false))
                        .code());
    }
}
