package dev.syncular.server.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.wire.OpResult;
import dev.syncular.server.wire.RecoveryDetails;
import dev.syncular.server.wire.SparseRow;
import org.junit.jupiter.api.Test;

/**
 * {@link RowSizeCap} (issue 45): the row cap on the encoded payload, the value cap per column (text as UTF-8), and
 * §6.3.1 details that pass the wire's own check.
 */
class RowSizeCapTest {
    private static final TableSchema NOTES = SyncScenariosContract.SCHEMA.table("notes");
    private static final SyncLimits CAPS = new SyncLimits(500, 256 * 1024, 1000L, 256, 8L << 20, 1000, 100);

    private static SparseRow row(Object body) {
        boolean[] present = new boolean[NOTES.columnCount()];
        Object[] values = new Object[NOTES.columnCount()];
        present[0] = true;
        values[0] = "n1";
        int bodyColumn = NOTES.columnIndex("body");
        present[bodyColumn] = true;
        values[bodyColumn] = body;
        return new SparseRow(present, values);
    }

    @Test
    void withinBothCapsPasses() {
        assertNull(RowSizeCap.checkPayload(0, NOTES, 1000, CAPS));
        assertNull(RowSizeCap.checkValues(0, NOTES, row("x".repeat(100)), CAPS));
    }

    @Test
    void aRowOverTheRowCapIsRejectedWithoutAColumnBeforeItIsDecoded() {
        PushOperations.Rejection r = RowSizeCap.checkPayload(3, NOTES, 1001, CAPS);
        OpResult.Error e = (OpResult.Error) r.result();
        assertEquals(3, e.opIndex());
        assertEquals("sync.constraint_violation", e.code());
        assertEquals(
                "{\"reason\":\"row_too_large\",\"references\":{\"bytes\":\"1001\",\"limit\":\"1000\",\"table\":\"notes\"}}",
                r.detailsJson());
        RecoveryDetails.require(r.detailsJson());
    }

    @Test
    void aValueOverTheValueCapNamesItsColumnCountingUtf8() {
        // 34 three-byte characters: 102 bytes of UTF-8, though only 34 chars
        PushOperations.Rejection r = RowSizeCap.checkValues(0, NOTES, row("€".repeat(34)), CAPS);
        assertEquals(
                "{\"fieldPaths\":[\"body\"],\"reason\":\"value_too_large\",\"references\":{\"bytes\":\"102\","
                        + "\"limit\":\"100\",\"table\":\"notes\"}}",
                r.detailsJson());
        RecoveryDetails.require(r.detailsJson());
        assertNull(RowSizeCap.checkValues(0, NOTES, row("€".repeat(33)), CAPS), "99 bytes pass");
    }
}
