package dev.syncular.server.operations;

import dev.syncular.server.schema.ColumnSchema;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.sync.ServerCommand;
import dev.syncular.server.wire.ColumnType;
import dev.syncular.server.wire.Op;
import dev.syncular.server.wire.PushOperation;
import dev.syncular.server.wire.SparseRow;
import dev.syncular.server.wire.SparseRowCodec;
import io.smallrye.mutiny.Uni;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A {@link RemoteCommand} as the engine runs it (REMOTE.md §3): its row reads from the push transaction's stored
 * rows (current schema, column name to value), its mutations encoded as the commit's full-row upserts (every
 * column present, an absent one written as null) and deletes. A mutation on an unknown table, or whose row id is
 * not its primary key's, is the command's bug: {@code operation.invalid_request}, nothing applied.
 */
final class CommandRun implements ServerCommand {
    private final RemoteCommand command;
    private final RemoteCommand.Call call;
    private final CompiledSchema schema;

    CommandRun(RemoteCommand command, RemoteCommand.Call call, CompiledSchema schema) {
        this.command = command;
        this.call = call;
        this.schema = schema;
    }

    @Override
    public Uni<List<PushOperation>> run(ServerCommand.Rows rows) {
        RemoteCommand.Rows readable = (table, rowId) ->
                rows.getRow(table, rowId).map(found -> found.map(row -> values(schema.table(table), row)));
        return command.run(call, readable).map(mutations -> {
            List<PushOperation> ops = new ArrayList<>();
            for (RemoteCommand.Mutation m : mutations == null ? List.<RemoteCommand.Mutation>of() : mutations) {
                ops.add(operation(m));
            }
            return ops;
        });
    }

    private static Map<String, Object> values(TableSchema table, StoredRow row) {
        Map<String, Object> out = new LinkedHashMap<>();
        List<ColumnSchema> columns = table.columns();
        for (int i = 0; i < columns.size() && i < row.values().length; i++) {
            out.put(columns.get(i).name(), row.values()[i]);
        }
        return out;
    }

    /** §4 numbers arrive as doubles: an integral one fits an integer column, any number a float column. */
    private static Object coerced(ColumnSchema column, Object v) {
        if (column.type() == ColumnType.INTEGER && v instanceof Double d && d == Math.rint(d) && !d.isInfinite()) {
            return d.longValue();
        }
        if (column.type() == ColumnType.INTEGER && v instanceof Integer i) {
            return i.longValue();
        }
        if (column.type() == ColumnType.FLOAT && v instanceof Number n && !(v instanceof Double)) {
            return n.doubleValue();
        }
        return v;
    }

    private PushOperation operation(RemoteCommand.Mutation m) {
        TableSchema table = m.table() == null ? null : schema.table(m.table());
        if (table == null) {
            throw OperationException.invalid("a command mutation names an unknown table");
        }
        if (m.rowId() == null || m.rowId().isEmpty()) {
            throw OperationException.invalid("a command mutation has no row id");
        }
        Optional<Map<String, Object>> row = m.row() == null ? Optional.empty() : m.row();
        if (row.isEmpty()) {
            return new PushOperation(table.name(), m.rowId(), Op.DELETE, null, null);
        }
        boolean[] present = new boolean[table.columnCount()];
        Object[] values = new Object[table.columnCount()];
        Arrays.fill(present, true);
        for (Map.Entry<String, Object> e : row.get().entrySet()) {
            if (table.column(e.getKey()) == null) {
                throw OperationException.invalid("a command mutation names an unknown column");
            }
            values[table.columnIndex(e.getKey())] = coerced(table.column(e.getKey()), e.getValue());
        }
        Object key = values[table.primaryKeyIndex()];
        if (key == null || !m.rowId().equals(table.primaryKeyColumn().type().rowIdOf(key))) {
            throw OperationException.invalid("a command mutation's row id is not its primary key");
        }
        byte[] payload;
        try {
            payload = new SparseRowCodec(table.rowLayout()).encode(new SparseRow(present, values));
        } catch (RuntimeException e) {
            throw OperationException.invalid("a command mutation holds a value its column cannot take");
        }
        return new PushOperation(table.name(), m.rowId(), Op.UPSERT, null, payload);
    }
}
