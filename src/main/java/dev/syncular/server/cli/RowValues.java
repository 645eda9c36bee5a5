package dev.syncular.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.schema.ColumnSchema;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.wire.ColumnType;
import dev.syncular.server.wire.DebugJson;
import dev.syncular.server.wire.Op;
import dev.syncular.server.wire.PushOperation;
import dev.syncular.server.wire.SparseRow;
import dev.syncular.server.wire.SparseRowCodec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Rows between JSON and the wire (§2.4): push operations from JSON rows, sparse upserts from column values,
 * row ids from primary keys, and rows rendered back with the §11.1 value rules.
 *
 * <p>A JSON row is an object of column names to values, an upsert of exactly those columns (the primary key
 * among them; a row the server does not have yet needs every column, §6.2); {@code "$baseVersion": n} makes
 * it conditional. {@code {"$delete": <primary key>}} is a
 * delete. Values: strings, numbers and booleans as such, {@code json} columns any JSON value, {@code blob_ref}
 * columns the BlobRef object (§5.9.1), {@code bytes} and {@code crdt} columns base64 text, {@code null} a NULL.
 */
public final class RowValues {
    private static final String BASE_VERSION = "$baseVersion";
    private static final String DELETE = "$delete";
    /** A row's own table, for commits that write several tables. */
    static final String TABLE = "$table";

    private RowValues() {}

    /** The operations of a JSON row or array of rows, in order. */
    public static List<PushOperation> operations(TableSchema table, JsonNode rows) {
        List<PushOperation> ops = new ArrayList<>();
        if (rows.isArray()) {
            rows.forEach(row -> ops.add(operation(table, row)));
        } else {
            ops.add(operation(table, rows));
        }
        if (ops.isEmpty()) {
            throw new IllegalArgumentException("no rows to push");
        }
        return ops;
    }

    /**
     * The operations of a JSON row or array of rows, in order, for one commit over several tables: a row's
     * {@code "$table"} names its table, else it belongs to {@code defaultTable} ({@code null}: every row must name
     * one).
     */
    public static List<PushOperation> operations(CompiledSchema schema, TableSchema defaultTable, JsonNode rows) {
        List<PushOperation> ops = new ArrayList<>();
        for (JsonNode row : rows.isArray() ? rows : List.of(rows)) {
            ops.add(operation(tableOf(schema, defaultTable, row), row));
        }
        if (ops.isEmpty()) {
            throw new IllegalArgumentException("no rows to push");
        }
        return ops;
    }

    private static TableSchema tableOf(CompiledSchema schema, TableSchema defaultTable, JsonNode row) {
        JsonNode named = row.isObject() ? row.get(TABLE) : null;
        if (named == null) {
            if (defaultTable == null) {
                throw new IllegalArgumentException(
                        "a row needs \"" + TABLE + "\" (its table) when push names no" + " table: " + row);
            }
            return defaultTable;
        }
        TableSchema t = named.isTextual() ? schema.table(named.asText()) : null;
        if (t == null) {
            throw new IllegalArgumentException(
                    "\"" + TABLE + "\": the schema has no table " + named + "; it has " + schema.tableNames());
        }
        return t;
    }

    private static PushOperation operation(TableSchema table, JsonNode row) {
        if (!row.isObject()) {
            throw new IllegalArgumentException("a row is a JSON object of column names to values, not " + row);
        }
        Long baseVersion = null;
        JsonNode base = row.get(BASE_VERSION);
        if (base != null) {
            if (!base.canConvertToExactIntegral() || !base.canConvertToLong()) {
                throw new IllegalArgumentException(BASE_VERSION + " must be an integer");
            }
            baseVersion = base.asLong();
        }
        JsonNode deleted = row.get(DELETE);
        if (deleted != null) {
            String rowId = deleted.isTextual()
                    ? deleted.asText()
                    : table.primaryKeyColumn().type().rowIdOf(value(table.primaryKeyColumn(), deleted));
            return new PushOperation(table.name(), rowId, Op.DELETE, baseVersion, null);
        }
        Map<String, Object> values = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> e : row.properties()) {
            if (e.getKey().equals(BASE_VERSION) || e.getKey().equals(TABLE)) {
                continue;
            }
            ColumnSchema column = table.column(e.getKey());
            if (column == null) {
                throw new IllegalArgumentException("table '" + table.name() + "' has no column '" + e.getKey() + "'");
            }
            values.put(e.getKey(), value(column, e.getValue()));
        }
        if (values.get(table.primaryKey()) == null) {
            throw new IllegalArgumentException(
                    "a row of '" + table.name() + "' needs its primary key '" + table.primaryKey() + "'");
        }
        return upsert(table, values, baseVersion);
    }

    /** A sparse upsert (§2.4) writing exactly the given columns; the primary key must be among them. */
    public static PushOperation upsert(TableSchema table, Map<String, Object> values, Long baseVersion) {
        boolean[] present = new boolean[table.columnCount()];
        Object[] vals = new Object[table.columnCount()];
        values.forEach((name, v) -> {
            int i = table.columnIndex(name);
            present[i] = true;
            vals[i] = v;
        });
        String rowId = table.primaryKeyColumn().type().rowIdOf(vals[table.primaryKeyIndex()]);
        byte[] payload = new SparseRowCodec(table.rowLayout()).encode(new SparseRow(present, vals));
        return new PushOperation(table.name(), rowId, Op.UPSERT, baseVersion, payload);
    }

    /** A row's values by column name, rendered by the §11.1 value rules. */
    public static ObjectNode render(TableSchema table, Object[] values) {
        ObjectNode o = JsonNodeFactory.instance.objectNode();
        for (int i = 0; i < values.length; i++) {
            ColumnSchema c = table.column(i);
            o.set(c.name(), DebugJson.value(c.type(), values[i]));
        }
        return o;
    }

    private static Object value(ColumnSchema column, JsonNode v) {
        if (v.isNull()) {
            return null;
        }
        ColumnType type = column.type();
        boolean ok = switch (type) {
            case STRING -> v.isTextual();
            case INTEGER -> v.canConvertToExactIntegral() && v.canConvertToLong();
            case FLOAT -> v.isNumber();
            case BOOLEAN -> v.isBoolean();
            case JSON -> true;
            case BLOB_REF -> v.isObject() || v.isTextual();
            case BYTES, CRDT -> v.isTextual();
        };
        if (!ok) {
            throw new IllegalArgumentException(
                    "column '" + column.name() + "' is " + type.wireName + " (" + expected(type) + "), not " + v);
        }
        return switch (type) {
            case STRING -> v.asText();
            case INTEGER -> v.asLong();
            case FLOAT -> v.asDouble();
            case BOOLEAN -> v.asBoolean();
            case JSON -> v.toString();
            case BLOB_REF -> v.isTextual() ? v.asText() : v.toString();
            case BYTES, CRDT -> base64(column, v.asText());
        };
    }

    private static String expected(ColumnType type) {
        return switch (type) {
            case STRING -> "a JSON string";
            case INTEGER -> "an integer";
            case FLOAT -> "a number";
            case BOOLEAN -> "true or false";
            case JSON -> "any JSON value";
            case BLOB_REF -> "a BlobRef object {\"blobId\":…,\"byteLength\":…}";
            case BYTES, CRDT -> "base64 text";
        };
    }

    private static byte[] base64(ColumnSchema column, String text) {
        try {
            return Base64.getDecoder().decode(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("column '" + column.name() + "' takes base64 text: " + e.getMessage());
        }
    }
}
