package dev.syncular.server.storage.postgres;

import dev.syncular.server.schema.ColumnSchema;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.ColumnVersions;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.wire.ColumnType;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.buffer.Buffer;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The row projection ({@code sync_rows_<table>}, §2.2 per-row server version, column versions and stored
 * scopes; §2.4 typed columns): current rows by id (in and outside a push transaction, §6.2 conflict
 * detection reads them), every row of a partition and the row counts per table (operator tooling), and the
 * value binding and decoding every reader and writer of the projection shares. The statement texts live in {@link RowTable}.
 */
final class ProjectionRows {
    private final Pool pool;
    private final InstalledSchema installed;

    ProjectionRows(Pool pool, InstalledSchema installed) {
        this.pool = pool;
        this.installed = installed;
    }

    Uni<Map<String, StoredRow>> readRows(String partition, String table, List<String> rowIds) {
        return readRows(pool, partition, table, rowIds);
    }

    Uni<Map<String, StoredRow>> readRows(SqlClient c, String partition, String table, List<String> rowIds) {
        RowTable rt;
        try {
            rt = installed.table(table);
        } catch (RuntimeException e) {
            return Uni.createFrom().failure(e);
        }
        if (rowIds.isEmpty()) {
            return Uni.createFrom().item(Map.of());
        }
        // one id (the common push prefetch): the scalar statement, whose generic plan is kept (see RowTable)
        Uni<RowSet<Row>> read = rowIds.size() == 1
                ? c.preparedQuery(rt.readRowSql).execute(Tuple.of(partition, rowIds.get(0)))
                : c.preparedQuery(rt.readRowsSql)
                        .execute(Tuple.of(partition).addArrayOfString(rowIds.toArray(String[]::new)));
        return read.map(rs -> {
            Map<String, StoredRow> found = new HashMap<>();
            for (Row r : rs) {
                StoredRow row = storedRow(rt.schema, r);
                found.put(row.rowId(), row);
            }
            return inRequestOrder(rowIds, found);
        });
    }

    Uni<List<StoredRow>> readAllRows(String partition, String table) {
        RowTable rt;
        try {
            rt = installed.table(table);
        } catch (RuntimeException e) {
            return Uni.createFrom().failure(e);
        }
        return pool.preparedQuery(rt.readAllRowsSql)
                .execute(Tuple.of(partition))
                .map(rs -> storedRows(rt.schema, rs));
    }

    /** Current rows per synced table in the partition (one statement over every projection table), schema order. */
    Uni<Map<String, Long>> countRows(String partition) {
        CompiledSchema schema = installed.schema();
        if (schema == null) {
            return Uni.createFrom()
                    .failure(new StorageException(
                            StorageException.INVALID_ARGUMENT, "ensureSchema has not completed", Map.of()));
        }
        if (schema.tables().isEmpty()) {
            return Uni.createFrom().item(Map.of());
        }
        StringBuilder sql = new StringBuilder();
        for (TableSchema t : schema.tables()) {
            if (sql.length() > 0) {
                sql.append(" UNION ALL ");
            }
            sql.append("SELECT ")
                    .append(PgSql.lit(t.name()))
                    .append("::text, count(*) FROM ")
                    .append(installed.table(t.name()).qualifiedName)
                    .append(" WHERE \"_sync_partition\" = $1");
        }
        return pool.preparedQuery(sql.toString()).execute(Tuple.of(partition)).map(rs -> {
            Map<String, Long> counts = new LinkedHashMap<>();
            for (Row r : rs) {
                counts.put(r.getString(0), r.getLong(1));
            }
            return counts;
        });
    }

    /**
     * Rows whose {@code column} equals {@code value} (is NULL for a {@code null} value), by row id, at most
     * {@code limit} ({@code PushTx#readRowsWhere}).
     */
    Uni<List<StoredRow>> readRowsWhere(
            SqlClient c, String partition, String table, String column, Object value, int limit) {
        RowTable rt;
        ColumnSchema col;
        try {
            rt = installed.table(table);
            col = rt.schema.column(column);
            if (col == null) {
                throw new StorageException(
                        StorageException.INVALID_ARGUMENT, "unknown column", Map.of("table", table, "column", column));
            }
        } catch (RuntimeException e) {
            return Uni.createFrom().failure(e);
        }
        return (value == null
                        ? c.preparedQuery(rt.rowsWhereNullSql(col)).execute(Tuple.of(partition, limit))
                        : c.preparedQuery(rt.rowsWhereSql(col))
                                .execute(Tuple.of(partition, bindValue(col.type(), value), limit)))
                .map(rs -> storedRows(rt.schema, rs));
    }

    /**
     * {@link #readRowsWhere} for a non-null value, restricted to rows whose stored scopes hold one of the listed
     * values for every variable of {@code within} ({@code PushTx#readRowsWhereWithin}).
     */
    Uni<List<StoredRow>> readRowsWhereWithin(
            SqlClient c,
            String partition,
            String table,
            String column,
            Object value,
            Map<String, List<String>> within,
            int limit) {
        FilterColumn f;
        try {
            f = filterColumn(table, column, value);
        } catch (RuntimeException e) {
            return Uni.createFrom().failure(e);
        }
        RowTable rt = f.table();
        ColumnSchema col = f.column();
        Tuple args = Tuple.of(partition, bindValue(col.type(), value), limit);
        for (Map.Entry<String, List<String>> e : new TreeMap<>(within).entrySet()) {
            args.addString(e.getKey()).addArrayOfString(e.getValue().toArray(String[]::new));
        }
        return c.preparedQuery(rt.rowsWhereWithinSql(col, within.size()))
                .execute(args)
                .map(rs -> storedRows(rt.schema, rs));
    }

    /** {@link #readRowsWhere} for a non-null value, after {@code afterRowId} (exclusive; {@code ""} for the first page). */
    Uni<List<StoredRow>> readRowsWhereAfter(
            SqlClient c, String partition, String table, String column, Object value, String afterRowId, int limit) {
        FilterColumn f;
        try {
            f = filterColumn(table, column, value);
        } catch (RuntimeException e) {
            return Uni.createFrom().failure(e);
        }
        RowTable rt = f.table();
        ColumnSchema col = f.column();
        return c.preparedQuery(rt.rowsWhereAfterSql(col))
                .execute(Tuple.of(partition, bindValue(col.type(), value), afterRowId, limit))
                .map(rs -> storedRows(rt.schema, rs));
    }

    /** A table and one of its columns, for a lookup by a non-null value. */
    private record FilterColumn(RowTable table, ColumnSchema column) {}

    /** The table and column of a lookup by {@code value}; refused when the column is unknown or the value null. */
    private FilterColumn filterColumn(String table, String column, Object value) {
        RowTable rt = installed.table(table);
        ColumnSchema col = rt.schema.column(column);
        if (col == null || value == null) {
            throw new StorageException(
                    StorageException.INVALID_ARGUMENT,
                    "unknown column or null value",
                    Map.of("table", table, "column", column));
        }
        return new FilterColumn(rt, col);
    }

    /** The found rows keyed and ordered by the requested ids (absent ids left out). */
    static Map<String, StoredRow> inRequestOrder(List<String> rowIds, Map<String, StoredRow> found) {
        Map<String, StoredRow> out = new LinkedHashMap<>();
        for (String id : rowIds) {
            StoredRow row = found.get(id);
            if (row != null) {
                out.put(id, row);
            }
        }
        return out;
    }

    private static List<StoredRow> storedRows(TableSchema ts, RowSet<Row> rs) {
        List<StoredRow> out = new ArrayList<>();
        for (Row r : rs) {
            out.add(storedRow(ts, r));
        }
        return out;
    }

    /** A row of {@link RowTable#selectList}. */
    static StoredRow storedRow(TableSchema ts, Row r) {
        long version = r.getLong(1);
        Object[] values = new Object[ts.columnCount()];
        for (int i = 0; i < values.length; i++) {
            values[i] = readValue(r, 4 + i, ts.column(i).type());
        }
        Buffer cv = r.getBuffer(3);
        long[] versions = ColumnVersions.decode(cv == null ? null : cv.getBytes(), ts.columnCount(), version);
        return new StoredRow(r.getString(0), version, values, versions, StoredScopes.parseScopes(r.getString(2)));
    }

    static Object bindValue(ColumnType type, Object v) {
        if (v == null) {
            return null;
        }
        try {
            return switch (type) {
                case STRING, JSON, BLOB_REF -> (String) v;
                case INTEGER -> ((Number) v).longValue();
                case FLOAT -> ((Number) v).doubleValue();
                case BOOLEAN -> (Boolean) v;
                case BYTES, CRDT -> io.vertx.core.buffer.Buffer.buffer((byte[]) v);
            };
        } catch (ClassCastException e) {
            throw new StorageException(
                    StorageException.INVALID_ARGUMENT,
                    "row value does not match the column type",
                    Map.of("type", type.wireName));
        }
    }

    static Object readValue(Row r, int i, ColumnType type) {
        return switch (type) {
            case STRING, JSON, BLOB_REF -> r.getString(i);
            case INTEGER -> r.getLong(i);
            case FLOAT -> r.getDouble(i);
            case BOOLEAN -> r.getBoolean(i);
            case BYTES, CRDT -> PgSql.bytes(r.getBuffer(i));
        };
    }
}
