package dev.syncular.server.jobs;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.syncular.server.schema.ColumnSchema;
import dev.syncular.server.schema.ScopePattern;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.ChangeToWrite;
import dev.syncular.server.storage.PushTx;
import dev.syncular.server.storage.StoredCommit;
import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.wire.Json;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A declarative backfill (§2.4 backfill checkpoints): columns of one table set to constant values on every row
 * of a partition where they are NULL — the data a build's newly appended nullable columns need before they may
 * be served. Each page is one server commit (actor and client {@value #ACTOR}) whose changes carry the rows
 * after the write, so clients receive the values like any other change (§4.5, §8.2); each filled column's
 * column version moves to the row's new server version (§6.2).
 *
 * <p>Progress needs no cursor: a filled row no longer matches, so a page always reads the first rows still
 * NULL in row-id order, and a rerun after a crash continues where the last committed page ended.
 */
public final class ColumnFill {
    /** Actor and client id of the commits a backfill appends. */
    public static final String ACTOR = "syncular-backfill";

    private final TableSchema table;
    /** Column index → value, in the order given. */
    private final Map<Integer, Object> values;

    private ColumnFill(TableSchema table, Map<Integer, Object> values) {
        this.table = table;
        this.values = values;
    }

    /**
     * The fill of {@code literals} (column → JSON literal, e.g. {@code 0}, {@code "todo"}, {@code false},
     * {@code {"a":1}}) on {@code table}. Refused with {@link IllegalArgumentException}: an unknown table or
     * column, the primary key, a scope column (scopes are immutable, §3.4), a declared reference, a
     * {@code bytes}/{@code blob_ref}/{@code crdt} column, a {@code null} or mistyped literal.
     */
    public static ColumnFill of(TableSchema table, String tableName, Map<String, String> literals) {
        if (table == null) {
            throw new IllegalArgumentException("the running schema has no table \"" + tableName + "\"");
        }
        if (literals.isEmpty()) {
            throw new IllegalArgumentException("nothing to fill: give at least one --set <column>=<json>");
        }
        Map<Integer, Object> values = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : literals.entrySet()) {
            String name = e.getKey();
            ColumnSchema column = table.column(name);
            if (column == null) {
                throw new IllegalArgumentException("table \"" + table.name() + "\" has no column \"" + name + "\"");
            }
            int index = table.columnIndex(name);
            if (index == table.primaryKeyIndex()) {
                throw new IllegalArgumentException("\"" + name + "\" is the primary key");
            }
            for (ScopePattern p : table.scopePatterns()) {
                if (p.columnIndex() == index) {
                    throw new IllegalArgumentException("\"" + name + "\" is a scope column (immutable, §3.4)");
                }
            }
            if (table.referenceOn(name) != null) {
                throw new IllegalArgumentException("\"" + name + "\" is a declared reference (§6.11)");
            }
            values.put(index, value(column, e.getValue()));
        }
        return new ColumnFill(table, values);
    }

    public String table() {
        return table.name();
    }

    /**
     * Fills at most {@code limit} rows, the first ones (by row id) where a filled column is NULL, as one commit
     * {@code clientCommitId}: yields how many rows it wrote, {@code 0} when none is left.
     */
    public Uni<Integer> fillPage(PushTx tx, String clientCommitId, int limit, long nowMs) {
        List<Integer> columns = new ArrayList<>(values.keySet());
        return pending(tx, columns, 0, limit).flatMap(rows -> {
            if (rows.isEmpty()) {
                return Uni.createFrom().item(0);
            }
            List<ChangeToWrite> changes = new ArrayList<>(rows.size());
            List<StoredRow> written = new ArrayList<>(rows.size());
            for (StoredRow row : rows) {
                StoredRow filled = filled(row);
                written.add(filled);
                changes.add(ChangeToWrite.upsert(
                        table.name(), row.rowId(), filled.serverVersion(), row.scopes(), filled.values()));
            }
            return tx.appendCommit(ACTOR, ACTOR, clientCommitId, nowMs, changes, StoredCommit.UNTRACED)
                    .flatMap(seq -> Multi.createFrom()
                            .range(0, rows.size())
                            .onItem()
                            .transformToUniAndConcatenate(i -> tx.upsertRow(table.name(), written.get(i), rows.get(i)))
                            .collect()
                            .last())
                    .replaceWith(rows.size());
        });
    }

    /** The rows still NULL in the first filled column that has any, at most {@code limit}. */
    private Uni<List<StoredRow>> pending(PushTx tx, List<Integer> columns, int k, int limit) {
        if (k == columns.size()) {
            return Uni.createFrom().item(List.of());
        }
        return tx.readRowsWhere(table.name(), table.column(columns.get(k)).name(), null, limit)
                .flatMap(rows -> rows.isEmpty()
                        ? pending(tx, columns, k + 1, limit)
                        : Uni.createFrom().item(rows));
    }

    /** {@code row} with its NULL filled columns set, at the next server version. */
    private StoredRow filled(StoredRow row) {
        long next = row.serverVersion() + 1;
        Object[] v = row.values().clone();
        long[] versions = row.columnVersions().clone();
        values.forEach((i, value) -> {
            if (v[i] == null) {
                v[i] = value;
                versions[i] = next;
            }
        });
        return new StoredRow(row.rowId(), next, v, versions, row.scopes());
    }

    /** The Java value of a JSON literal for {@code column} (the storage's value per column type). */
    private static Object value(ColumnSchema column, String literal) {
        JsonNode n;
        try {
            n = Json.readTree(literal);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(
                    "the value of \"" + column.name() + "\" is not a JSON literal: " + literal);
        }
        if (n == null || n.isNull() || n.isMissingNode()) {
            throw new IllegalArgumentException("the value of \"" + column.name() + "\" is null: nothing to fill");
        }
        Object v = switch (column.type()) {
            case STRING -> n.isTextual() ? n.textValue() : null;
            case INTEGER -> n.isIntegralNumber() && n.canConvertToLong() ? n.longValue() : null;
            case FLOAT -> n.isNumber() ? n.doubleValue() : null;
            case BOOLEAN -> n.isBoolean() ? n.booleanValue() : null;
            case JSON -> n.toString();
            case BYTES, BLOB_REF, CRDT ->
                throw new IllegalArgumentException("\"" + column.name() + "\" is a " + column.type().wireName
                        + " column: not filled by a constant");
        };
        if (v == null) {
            throw new IllegalArgumentException(
                    "\"" + column.name() + "\" is a " + column.type().wireName + " column; " + literal + " is not one");
        }
        return v;
    }
}
