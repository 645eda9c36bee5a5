package dev.syncular.server.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.wire.Op;
import dev.syncular.server.wire.PushOperation;
import dev.syncular.server.wire.SparseRow;
import dev.syncular.server.wire.SparseRowCodec;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** JSON rows to push operations (§2.4 sparse upserts) for every column type, and the mistakes reported. */
class RowValuesTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final TableSchema T = SchemaLoader.parse("""
            {"version": 1, "tables": [{"name": "t", "primaryKey": "k", "scopes": ["s:{s}"], "columns": [
              {"name": "k", "type": "integer", "nullable": false}, {"name": "s", "type": "string", "nullable": false},
              {"name": "f", "type": "float", "nullable": true}, {"name": "b", "type": "boolean", "nullable": true},
              {"name": "j", "type": "json", "nullable": true}, {"name": "by", "type": "bytes", "nullable": true},
              {"name": "r", "type": "blob_ref", "nullable": true}]}]}""").table("t");

    private static List<PushOperation> ops(String json) throws Exception {
        return RowValues.operations(T, JSON.readTree(json));
    }

    @Test
    void anUpsertCarriesExactlyTheGivenColumnsInTheirWireTypes() throws Exception {
        String ref = "{\"blobId\":\"sha256:" + "a".repeat(64) + "\",\"byteLength\":3}";
        PushOperation op = ops("{\"k\": 7, \"f\": 1, \"b\": true, \"j\": {\"x\": [1, 2]}, \"by\": \"AQID\", \"r\": "
                        + ref + ", \"$baseVersion\": 4}")
                .get(0);
        assertEquals("7", op.rowId());
        assertEquals(Op.UPSERT, op.op());
        assertEquals(4L, op.baseVersion());
        SparseRow row = new SparseRowCodec(T.rowLayout()).decode(op.payload());
        assertEquals(7L, row.value(0));
        assertFalse(row.isPresent(1), "s was not given");
        assertEquals(1.0, row.value(2));
        assertEquals(true, row.value(3));
        assertEquals("{\"x\":[1,2]}", row.value(4));
        assertArrayEquals(new byte[] {1, 2, 3}, (byte[]) row.value(5));
        assertEquals(ref, row.value(6));
    }

    @Test
    void aNullIsAPresentNullAndDeletesTakeThePrimaryKey() throws Exception {
        List<PushOperation> ops = ops("[{\"k\": 1, \"j\": null}, {\"$delete\": 2}, {\"$delete\": \"3\"}]");
        SparseRow row = new SparseRowCodec(T.rowLayout()).decode(ops.get(0).payload());
        assertTrue(row.isPresent(4));
        assertNull(row.value(4));
        assertEquals(
                List.of("1", "2", "3"), ops.stream().map(PushOperation::rowId).toList());
        assertEquals(Op.DELETE, ops.get(1).op());
        assertNull(ops.get(1).payload());
    }

    @Test
    void mistakesNameTheColumnAndWhatItTakes() {
        assertEquals("table 't' has no column 'colour'", message("{\"k\": 1, \"colour\": 2}"));
        assertEquals("column 'k' is integer (an integer), not 1.5", message("{\"k\": 1.5}"));
        assertEquals("column 's' is string (a JSON string), not 3", message("{\"k\": 1, \"s\": 3}"));
        assertEquals("a row of 't' needs its primary key 'k'", message("{\"s\": \"x\"}"));
        assertTrue(message("{\"k\": 1, \"by\": \"not base64!\"}").startsWith("column 'by' takes base64 text"));
        assertEquals("no rows to push", message("[]"));
    }

    private static String message(String json) {
        return assertThrows(IllegalArgumentException.class, () -> ops(json)).getMessage();
    }

    @Test
    void renderedRowsFollowTheDebugValueRules() {
        Object[] values = {5L, "x", 2.0, null, "[1]", "hi".getBytes(StandardCharsets.UTF_8), null};
        assertEquals(
                "{\"k\":5,\"s\":\"x\",\"f\":2,\"b\":null,\"j\":[1],\"by\":\"aGk=\",\"r\":null}",
                RowValues.render(T, values).toString());
    }
}
