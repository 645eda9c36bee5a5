package dev.syncular.server.storage.postgres;

import dev.syncular.server.schema.ColumnSchema;
import dev.syncular.server.schema.IndexDef;
import dev.syncular.server.schema.ScopePattern;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.ColumnVersions;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.wire.BlobRefShape;
import dev.syncular.server.wire.ColumnDef;
import dev.syncular.server.wire.ColumnType;
import dev.syncular.server.wire.RowCodec;
import dev.syncular.server.wire.RowLayout;
import dev.syncular.server.wire.WireReader;
import dev.syncular.server.wire.WireWriter;
import io.vertx.core.buffer.Buffer;
import io.vertx.mutiny.sqlclient.Tuple;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/** Per-synced-table naming, type mapping and change-payload codec of the PostgreSQL projection. */
final class RowTable {
    static final String ROW_TABLE_PREFIX = "sync_rows_";
    static final int MAX_IDENTIFIER_BYTES = 63;

    /** Storage-internal columns (§2.4) with the catalog type and nullability the storage creates. */
    static final List<String[]> INTERNAL_COLUMNS = List.of(
            new String[] {"_sync_partition", "text", "NO"},
            new String[] {"_sync_row_id", "text", "NO"},
            new String[] {"_sync_server_version", "bigint", "NO"},
            new String[] {"_sync_scopes", "jsonb", "NO"},
            new String[] {"_sync_payload", "bytea", "YES"},
            new String[] {"_sync_column_versions", "bytea", "YES"});

    final TableSchema schema;
    final String physicalName;
    /** Indexes of the {@code blob_ref} columns (§5.9.4 reference index); empty for most tables. */
    final int[] blobRefColumns;
    /** The table's declared unique indexes by catalog name ({@link UniqueIndexes}); empty for most tables. */
    final Map<String, IndexDef> uniqueIndexes;

    private final Map<Integer, RowCodec> codecsByColumnCount = new ConcurrentHashMap<>();

    // ---- statement texts, built once per installed schema (the prepared-statement cache is keyed by text)
    /** The schema-qualified, quoted projection table. */
    final String qualifiedName;
    /** {@code _sync_row_id, _sync_server_version, _sync_scopes::text, _sync_column_versions, <columns>}. */
    final String selectList;
    /** {@code r._sync_row_id, r._sync_server_version, r.<columns>} (snapshot pages). */
    final String snapshotSelectList;
    /**
     * What a row of {@code r} holds, the measure snapshot reads are bounded by ({@link
     * dev.syncular.server.storage.SnapshotRows#bytes}): the row id's and each text or bytea value's length as stored
     * ({@code octet_length} reads a TOASTed value's header, never the value) and 8 per fixed-width value.
     */
    final String rowBytesSql;
    /** {@link #rowBytesSql} over the output columns of a page subquery {@code q}. */
    final String pageRowBytesSql;
    /**
     * Rows by id: {@code $1} partition, {@code $2} row ids (§6.2: the rows a push's conflict check reads under the
     * partition lock). One primary-key probe per id, whatever the plan: the
     * {@code LIMIT 1} subquery cannot be flattened into a join. With {@code = ANY($2)} a generic plan made while
     * the table was small (or before its first {@code ANALYZE}) scanned the whole partition and filtered by id,
     * under the partition lock, at a cost growing with the partition (auto_explain, bench/tenants.sh).
     */
    final String readRowsSql;
    /**
     * One row by id: {@code $1} partition, {@code $2} row id. A scalar bound, so the generic plan (a primary-key
     * probe) costs what a custom one does and the prepared statement stops re-planning; with
     * {@code = ANY($2)} the generic plan assumes a ten-element array, costs more than the custom plan of a
     * one-element array, and PostgreSQL re-plans on every execution (the push prefetch of a one-operation
     * commit).
     */
    final String readRowSql;
    /** Every row of a partition, by row id. */
    final String readAllRowsSql;
    /** The projection upsert: the columns in order, then partition, row id, version, scopes JSON, column versions. */
    final String upsertSql;
    /**
     * The projection update of a row known to be stored (read under the partition lock), with the parameters of
     * {@link #upsertSql}: a plain update writes no tuple-lock record, which {@code ON CONFLICT DO UPDATE} does
     * before every update it makes.
     */
    final String updateSql;
    /** {@code $1} partition, {@code $2} row id. */
    final String deleteSql;
    /** {@code readRowsWhere} per column name. */
    private final Map<String, String> rowsWhereSql = new ConcurrentHashMap<>();
    /** Bootstrap page statements per (snapshot, sorted scope variables). */
    private final Map<String, String> pageSql = new ConcurrentHashMap<>();

    RowTable(TableSchema schema) {
        this(schema, PgSql.q(physicalName(schema.name())));
    }

    /** @param qualifiedName the quoted (schema-qualified) projection table name */
    RowTable(TableSchema schema, String qualifiedName) {
        this.schema = schema;
        this.physicalName = physicalName(schema.name());
        this.qualifiedName = qualifiedName;
        StringBuilder sel = new StringBuilder(
                "\"_sync_row_id\", \"_sync_server_version\", \"_sync_scopes\"::text, \"_sync_column_versions\"");
        StringBuilder snap = new StringBuilder("r.\"_sync_row_id\", r.\"_sync_server_version\"");
        StringBuilder cols = new StringBuilder();
        StringBuilder params = new StringBuilder();
        StringBuilder updates = new StringBuilder();
        StringBuilder sets = new StringBuilder();
        int p = 0;
        for (ColumnSchema c : schema.columns()) {
            String name = PgSql.q(c.name());
            sel.append(", ").append(name);
            snap.append(", r.").append(name);
            cols.append(name).append(", ");
            params.append('$').append(++p).append(", ");
            updates.append(name).append(" = EXCLUDED.").append(name).append(", ");
            sets.append(name).append(" = $").append(p).append(", ");
        }
        this.selectList = sel.toString();
        this.snapshotSelectList = snap.toString();
        this.rowBytesSql = rowBytes(schema, "r.");
        this.pageRowBytesSql = rowBytes(schema, "q.");
        cols.append(
                "\"_sync_partition\", \"_sync_row_id\", \"_sync_server_version\", \"_sync_scopes\", \"_sync_column_versions\"");
        params.append('$')
                .append(++p)
                .append(", $")
                .append(++p)
                .append(", $")
                .append(++p)
                .append(", $")
                .append(++p)
                .append("::text::jsonb, $")
                .append(++p);
        updates.append("\"_sync_server_version\" = EXCLUDED.\"_sync_server_version\",")
                .append(" \"_sync_scopes\" = EXCLUDED.\"_sync_scopes\",")
                .append(" \"_sync_column_versions\" = EXCLUDED.\"_sync_column_versions\"");
        this.upsertSql = "INSERT INTO " + qualifiedName + " (" + cols + ") VALUES (" + params + ")"
                + " ON CONFLICT (\"_sync_partition\", \"_sync_row_id\") DO UPDATE SET " + updates;
        this.updateSql = "UPDATE " + qualifiedName + " SET " + sets + "\"_sync_server_version\" = $" + (p - 2)
                + ", \"_sync_scopes\" = $" + (p - 1) + "::text::jsonb, \"_sync_column_versions\" = $" + p
                + " WHERE \"_sync_partition\" = $" + (p - 4) + " AND \"_sync_row_id\" = $" + (p - 3);
        this.readRowsSql = "SELECT r.* FROM unnest($2::text[]) AS k(id) CROSS JOIN LATERAL (SELECT " + selectList
                + " FROM " + qualifiedName + " WHERE \"_sync_partition\" = $1 AND \"_sync_row_id\" = k.id LIMIT 1) r";
        this.readRowSql = "SELECT " + selectList + " FROM " + qualifiedName
                + " WHERE \"_sync_partition\" = $1 AND \"_sync_row_id\" = $2";
        this.readAllRowsSql = "SELECT " + selectList + " FROM " + qualifiedName
                + " WHERE \"_sync_partition\" = $1 ORDER BY \"_sync_row_id\" COLLATE \"C\"";
        this.deleteSql = "DELETE FROM " + qualifiedName + " WHERE \"_sync_partition\" = $1 AND \"_sync_row_id\" = $2";
        List<Integer> blobRefs = new ArrayList<>();
        for (int i = 0; i < schema.columnCount(); i++) {
            if (schema.column(i).type() == ColumnType.BLOB_REF) {
                blobRefs.add(i);
            }
        }
        this.blobRefColumns = blobRefs.stream().mapToInt(Integer::intValue).toArray();
        this.uniqueIndexes = UniqueIndexes.of(schema);
    }

    /**
     * The arguments of {@link #upsertSql} for {@code row} of {@code partition}: the app columns bound by type, then
     * the row id, server version, stored scopes and column versions.
     */
    Tuple upsertArgs(String partition, StoredRow row) {
        Object[] values = row.values();
        Tuple args = Tuple.tuple();
        for (int i = 0; i < schema.columnCount(); i++) {
            args.addValue(ProjectionRows.bindValue(schema.column(i).type(), values[i]));
        }
        args.addValue(partition)
                .addValue(row.rowId())
                .addValue(row.serverVersion())
                .addValue(StoredScopes.scopesJson(row.scopes()))
                .addValue(Buffer.buffer(ColumnVersions.encode(row.columnVersions())));
        return args;
    }

    /** {@code readRowsWhere} on {@code column} ({@code $1} partition, {@code $2} value, {@code $3} limit). */
    String rowsWhereSql(ColumnSchema column) {
        return rowsWhereSql.computeIfAbsent(
                column.name(),
                n -> "SELECT " + selectList + " FROM " + qualifiedName
                        + " WHERE \"_sync_partition\" = $1 AND " + PgSql.q(n) + " = $2"
                        + " ORDER BY \"_sync_row_id\" COLLATE \"C\" LIMIT $3");
    }

    /**
     * {@code readRowsWhere} on {@code column} after a row id ({@code $1} partition, {@code $2} value, {@code $3}
     * exclusive row id, {@code $4} limit): keyset pages of the §6.8 candidate scan.
     */
    String rowsWhereAfterSql(ColumnSchema column) {
        return rowsWhereSql.computeIfAbsent(
                column.name() + "\u0000after",
                n -> "SELECT " + selectList + " FROM "
                        + qualifiedName + " WHERE \"_sync_partition\" = $1 AND " + PgSql.q(column.name()) + " = $2"
                        + " AND \"_sync_row_id\" COLLATE \"C\" > $3 ORDER BY \"_sync_row_id\" COLLATE \"C\" LIMIT $4");
    }

    /**
     * {@code readRowsWhereWithin} on {@code column} with {@code variables} scope restrictions ({@code $1} partition,
     * {@code $2} value, {@code $3} limit, then per restriction a variable name and its allowed values).
     */
    String rowsWhereWithinSql(ColumnSchema column, int variables) {
        return rowsWhereSql.computeIfAbsent(column.name() + "\u0000within" + variables, n -> {
            StringBuilder sql = new StringBuilder("SELECT ")
                    .append(selectList)
                    .append(" FROM ")
                    .append(qualifiedName)
                    .append(" WHERE \"_sync_partition\" = $1 AND ")
                    .append(PgSql.q(column.name()))
                    .append(" = $2");
            for (int i = 0; i < variables; i++) {
                sql.append(" AND (\"_sync_scopes\" ->> $")
                        .append(4 + 2 * i)
                        .append("::text) = ANY($")
                        .append(5 + 2 * i)
                        .append("::text[])");
            }
            return sql.append(" ORDER BY \"_sync_row_id\" COLLATE \"C\" LIMIT $3")
                    .toString();
        });
    }

    /** {@code readRowsWhere} for the NULL value of {@code column} ({@code $1} partition, {@code $2} limit). */
    String rowsWhereNullSql(ColumnSchema column) {
        return rowsWhereSql.computeIfAbsent(
                column.name() + "\u0000null",
                n -> "SELECT " + selectList + " FROM "
                        + qualifiedName + " WHERE \"_sync_partition\" = $1 AND " + PgSql.q(column.name()) + " IS NULL"
                        + " ORDER BY \"_sync_row_id\" COLLATE \"C\" LIMIT $2");
    }

    /** A bootstrap page statement, built once per {@code key} (the caller's shape of the query). */
    String pageSql(String key, Function<String, String> build) {
        return pageSql.computeIfAbsent(key, build);
    }

    /** The distinct blob ids the row's non-NULL {@code blob_ref} values reference, in column order. */
    String[] blobIds(Object[] values) {
        Set<String> ids = new LinkedHashSet<>();
        for (int i : blobRefColumns) {
            if (i < values.length && values[i] instanceof String text) {
                String id = BlobRefShape.blobIdOf(text);
                if (id != null) {
                    ids.add(id);
                }
            }
        }
        return ids.toArray(String[]::new);
    }

    /**
     * {@code sync_rows_<table>}; a name longer than PostgreSQL's 63-byte identifier limit is cut and suffixed
     * with 8 hex digits of its SHA-256 so distinct tables never collide after truncation.
     */
    static String physicalName(String table) {
        String full = ROW_TABLE_PREFIX + table;
        if (full.getBytes(StandardCharsets.UTF_8).length <= MAX_IDENTIFIER_BYTES) {
            return full;
        }
        String hash;
        try {
            hash = HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(table.getBytes(StandardCharsets.UTF_8)))
                    .substring(0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        StringBuilder sb = new StringBuilder();
        int budget = MAX_IDENTIFIER_BYTES - 9;
        int used = 0;
        for (int i = 0; i < full.length(); ) {
            int cp = full.codePointAt(i);
            int len = new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8).length;
            if (used + len > budget) {
                break;
            }
            sb.appendCodePoint(cp);
            used += len;
            i += Character.charCount(cp);
        }
        return sb.append('_').append(hash).toString();
    }

    private static String rowBytes(TableSchema schema, String alias) {
        StringBuilder measure = new StringBuilder("octet_length(" + alias + "\"_sync_row_id\")");
        int fixed = 1; // the server version
        for (ColumnSchema c : schema.columns()) {
            if (sqlType(c.type()).equals("text") || sqlType(c.type()).equals("bytea")) {
                measure.append(" + coalesce(octet_length(")
                        .append(alias)
                        .append(PgSql.q(c.name()))
                        .append("), 0)");
            } else {
                fixed++;
            }
        }
        return measure.append(" + ").append(8 * fixed).toString();
    }

    static String sqlType(ColumnType type) {
        return switch (type) {
            case STRING, JSON, BLOB_REF -> "text"; // json kept as text: the raw string is preserved (§2.4)
            case INTEGER -> "bigint";
            case FLOAT -> "double precision";
            case BOOLEAN -> "boolean";
            case BYTES, CRDT -> "bytea";
        };
    }

    /** Scope keys (§3.1: pattern prefix + ':' + value) for stored scopes, deduplicated, declaration order. */
    String[] scopeKeys(Map<String, String> scopes) {
        Set<String> keys = new LinkedHashSet<>();
        for (ScopePattern p : schema.scopePatterns()) {
            String v = scopes.get(p.variable());
            if (v != null) {
                keys.add(p.scopeKey(v));
            }
        }
        return keys.toArray(String[]::new);
    }

    /** Index candidate keys for one effective variable and its values. */
    String[] scopeKeys(String variable, Set<String> values) {
        List<String> keys = new ArrayList<>();
        for (ScopePattern p : schema.scopePatterns()) {
            if (p.variable().equals(variable)) {
                for (String v : values) {
                    keys.add(p.scopeKey(v));
                }
            }
        }
        if (keys.isEmpty()) {
            throw new StorageException(
                    StorageException.INVALID_ARGUMENT,
                    "scope variable not declared by the table",
                    Map.of("table", schema.name(), "variable", variable));
        }
        return keys.toArray(String[]::new);
    }

    /**
     * Change payload: a u32 column count followed by the full-row codec encoding (§2.4) of the row under
     * the layout of that many leading columns. The count lets payloads written before an additive upgrade
     * (trailing columns added) decode after it, with the new columns read as null.
     */
    byte[] encodePayload(Object[] row) {
        if (row.length != schema.columnCount()) {
            throw new StorageException(
                    StorageException.INVALID_ARGUMENT,
                    "row has the wrong number of columns",
                    Map.of("table", schema.name()));
        }
        WireWriter w = new WireWriter(64);
        w.u32(row.length);
        codec(row.length).encode(w, row);
        return w.toByteArray();
    }

    Object[] decodePayload(byte[] payload) {
        WireReader r = new WireReader(payload);
        int count = (int) r.u32();
        Object[] prefix = codec(count).decode(r);
        Object[] row = new Object[schema.columnCount()];
        System.arraycopy(prefix, 0, row, 0, Math.min(prefix.length, row.length));
        return row;
    }

    private RowCodec codec(int columnCount) {
        return codecsByColumnCount.computeIfAbsent(columnCount, n -> {
            if (n > schema.columnCount()) {
                throw new StorageException(
                        StorageException.INVALID_ARGUMENT,
                        "stored payload has more columns than the schema",
                        Map.of("table", schema.name()));
            }
            List<ColumnDef> defs = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                ColumnSchema c = schema.column(i);
                defs.add(c.toColumnDef());
            }
            return new RowCodec(new RowLayout(defs, schema.primaryKeyIndex() < n ? schema.primaryKeyIndex() : -1));
        });
    }
}
