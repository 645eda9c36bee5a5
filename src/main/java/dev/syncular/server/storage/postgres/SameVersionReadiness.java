package dev.syncular.server.storage.postgres;

import dev.syncular.server.schema.ColumnSchema;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.StorageException;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * §2.4 "Same-version storage readiness": the persisted layouts of the synced tables against the running schema,
 * then the database catalog (columns, internal column types and nullability, primary key) against the layout;
 * a disagreement refuses with {@code sync.storage.stored_layout_mismatch} or
 * {@code sync.storage.physical_layout_mismatch}. Never writes.
 */
final class SameVersionReadiness {
    private final String pgSchema;

    SameVersionReadiness(String pgSchema) {
        this.pgSchema = pgSchema;
    }

    /** §2.4 same-version readiness: compare persisted layouts, then the catalog; never writes. */
    Uni<Void> verifySameVersion(SqlConnection conn, CompiledSchema running, Map<String, TableLayout> stored) {
        StorageException storedMismatch = TableLayout.compare(running, stored);
        if (storedMismatch != null) {
            return Uni.createFrom().failure(storedMismatch);
        }
        List<String> physicalNames = new ArrayList<>();
        for (TableSchema ts : running.tables()) {
            physicalNames.add(RowTable.physicalName(ts.name()));
        }
        String[] names = physicalNames.toArray(String[]::new);
        Uni<RowSet<Row>> columns = conn.preparedQuery(
                        "SELECT table_name::text, column_name::text, data_type::text, is_nullable::text"
                                + " FROM information_schema.columns WHERE table_schema = $1 AND table_name = ANY($2)")
                .execute(Tuple.of(pgSchema).addArrayOfString(names));
        Uni<RowSet<Row>> pks = conn.preparedQuery("SELECT c.relname::text, a.attname::text, k.ord"
                        + " FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid"
                        + " JOIN pg_namespace n ON n.oid = c.relnamespace"
                        + " CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)"
                        + " JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum"
                        + " WHERE i.indisprimary AND n.nspname = $1 AND c.relname = ANY($2) ORDER BY c.relname, k.ord")
                .execute(Tuple.of(pgSchema).addArrayOfString(names));
        return columns.chain(cols -> pks.map(pk -> {
                    Map<String, Map<String, String[]>> catalog = new HashMap<>();
                    for (Row r : cols) {
                        catalog.computeIfAbsent(r.getString(0), k -> new HashMap<>())
                                .put(r.getString(1), new String[] {r.getString(2), r.getString(3)});
                    }
                    Map<String, List<String>> primaryKeys = new HashMap<>();
                    for (Row r : pk) {
                        primaryKeys
                                .computeIfAbsent(r.getString(0), k -> new ArrayList<>())
                                .add(r.getString(1));
                    }
                    StorageException e = physicalMismatch(running, catalog, primaryKeys);
                    if (e != null) {
                        throw e;
                    }
                    return null;
                }))
                .replaceWithVoid();
    }

    private static StorageException physicalMismatch(
            CompiledSchema running, Map<String, Map<String, String[]>> catalog, Map<String, List<String>> primaryKeys) {
        for (TableSchema ts : running.tables()) {
            String physical = RowTable.physicalName(ts.name());
            Map<String, String[]> cols = catalog.get(physical);
            if (cols == null || cols.isEmpty()) {
                return physical(ts.name(), null, "missing_table", null, null);
            }
            for (ColumnSchema c : ts.columns()) {
                if (!cols.containsKey(c.name())) {
                    return physical(ts.name(), c.name(), "missing_column", null, null);
                }
            }
            for (String[] internal : RowTable.INTERNAL_COLUMNS) {
                String[] actual = cols.get(internal[0]);
                if (actual == null) {
                    return physical(ts.name(), internal[0], "missing_column", null, null);
                }
                if (!internal[1].equals(actual[0])) {
                    return physical(ts.name(), internal[0], "type", internal[1], actual[0]);
                }
                if (!internal[2].equals(actual[1])) {
                    return physical(
                            ts.name(), internal[0], "nullability", nullability(internal[2]), nullability(actual[1]));
                }
            }
            List<String> pk = primaryKeys.getOrDefault(physical, List.of());
            if (!pk.equals(List.of("_sync_partition", "_sync_row_id"))) {
                return physical(ts.name(), null, "primary_key", null, null);
            }
        }
        return null;
    }

    private static String nullability(String isNullable) {
        return "YES".equals(isNullable) ? "nullable" : "not_null";
    }

    private static StorageException physical(
            String table, String column, String reason, String expected, String actual) {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("table", table);
        if (column != null) {
            d.put("column", column);
        }
        d.put("reason", reason);
        if (expected != null) {
            d.put("expected", expected);
            d.put("actual", actual);
        }
        return new StorageException(
                StorageException.PHYSICAL_LAYOUT_MISMATCH,
                "database catalog disagrees with the storage layout of a synced table",
                d);
    }
}
