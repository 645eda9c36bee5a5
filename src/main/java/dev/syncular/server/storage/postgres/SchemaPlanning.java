package dev.syncular.server.storage.postgres;

import static dev.syncular.server.storage.postgres.PgSql.first;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.StoragePlan;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.Tuple;
import io.vertx.pgclient.PgException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The storage's part of a schema change's plan ({@link StoragePlan}): the stored marker read without a lock, the
 * {@link MigrationStep} start-up would take on it, the unique-index collisions start-up would refuse
 * ({@link UniqueIndexes#refuseDuplicates}) and the index builds that would follow ({@link UniqueIndexes#plannedSql}),
 * then the sizes a plan estimates from: registered partitions, each existing table's rows per partition and bytes,
 * and the client records per schema version. Reads only; no table lock (the row counts are plain reads).
 *
 * <p>A client record's schema version is the one its last recorded request sent ({@code sync_clients.schema_version});
 * for a record written before that column, the one its registered subscriptions were recorded with
 * ({@code subscriptions[*].schemaVersion}, written by every pulling round); a record with neither counts under
 * version 0.
 */
final class SchemaPlanning {
    private static final String UNDEFINED_TABLE = "42P01";
    /** A subscription entry's version when it is a plain integer, else 0. */
    private static final String ENTRY_VERSION =
            "CASE WHEN e->>'schemaVersion' ~ '^[0-9]{1,9}$' THEN (e->>'schemaVersion')::int ELSE 0 END";
    /** A client record's version: its column, else its subscription entry's. */
    private static final String CLIENT_VERSION = "COALESCE(c.schema_version, " + ENTRY_VERSION + ")";

    /** A catalog-only statement's estimated time, ms. */
    static final long CATALOG_MS = 5;
    /** Rows a concurrent index build reads per ms. */
    static final long ROWS_PER_MS = 200;
    /** The writer-fence step: fixed part, ms, and partitions raised per ms. */
    static final long FENCE_BASE_MS = 5;

    static final long FENCES_PER_MS = 1000;

    private final Pool pool;
    private final String pgSchema;
    private final RowTableDdl rowTables;
    private final UniqueIndexes unique;

    SchemaPlanning(Pool pool, String pgSchema) {
        this.pool = pool;
        this.pgSchema = pgSchema;
        this.rowTables = new RowTableDdl(pgSchema);
        this.unique = new UniqueIndexes(pool, pgSchema);
    }

    private String t(String name) {
        return PgSql.qualified(pgSchema, name);
    }

    Uni<StoragePlan> plan(CompiledSchema next, long clientsSinceMs) {
        return marker().chain(marker -> {
            MigrationStep step = marker == null
                    ? MigrationStep.decide(0, null, next, rowTables)
                    : MigrationStep.decide(marker.getInteger(0), marker.getString(1), next, rowTables);
            Uni<StorageException> duplicates = StoragePlan.UPGRADE.equals(step.action())
                    ? unique.refuseDuplicates(next)
                            .replaceWith((StorageException) null)
                            .onFailure(StorageException.class)
                            .recoverWithItem(e -> (StorageException) e)
                    : Uni.createFrom().nullItem();
            return duplicates.chain(refusal -> {
                MigrationStep decided = refusal == null
                        ? step
                        : new MigrationStep(StoragePlan.REFUSED, step.storedVersion(), List.of(), List.of(), refusal);
                Uni<List<String>> concurrent = StoragePlan.REFUSED.equals(decided.action())
                        ? Uni.createFrom().item(List.of())
                        : unique.plannedSql(next, decided.newTables());
                return concurrent.chain(indexes -> partitions()
                        .chain(partitions -> tableSizes(next, decided, layouts(marker))
                                .chain(tables -> clients(clientsSinceMs, tables).map(clients -> {
                                    List<StoragePlan.Statement> ddl = estimate(next, decided.ddl(), tables);
                                    long blocked = 0;
                                    for (StoragePlan.Statement st : ddl) {
                                        blocked += st.estimatedMs();
                                    }
                                    if (decided.migrates()) {
                                        blocked += FENCE_BASE_MS + partitions / FENCES_PER_MS;
                                    }
                                    return new StoragePlan(
                                            decided.storedVersion(),
                                            decided.action(),
                                            decided.refusal(),
                                            ddl,
                                            estimate(next, indexes, tables),
                                            blocked,
                                            partitions,
                                            tables,
                                            clients);
                                }))));
            });
        });
    }

    /**
     * The lock and estimated time of each statement on the current sizes. The model, from the statement kinds the
     * migration issues: a {@code CREATE TABLE IF NOT EXISTS} of a table that exists does nothing; one that creates
     * it, or an index on the table it creates, is a catalog change
     * ({@value #CATALOG_MS} ms); an {@code ADD COLUMN} is nullable without a default, so PostgreSQL changes the
     * catalog only, never rewrites the table, but takes ACCESS EXCLUSIVE for it; a concurrent unique-index build
     * reads the table once ({@value #ROWS_PER_MS} rows per ms) under SHARE UPDATE EXCLUSIVE, which writes pass.
     */
    private List<StoragePlan.Statement> estimate(
            CompiledSchema next, List<String> sql, List<StoragePlan.TableSize> sizes) {
        Map<String, Long> rows = new LinkedHashMap<>();
        sizes.forEach(z -> rows.put(z.table(), z.rows()));
        List<StoragePlan.Statement> out = new ArrayList<>();
        for (String st : sql) {
            String table = null;
            for (TableSchema ts : next.tables()) {
                if (st.contains(t(RowTable.physicalName(ts.name())))) {
                    table = ts.name();
                }
            }
            long n = table == null ? 0 : rows.getOrDefault(table, 0L);
            if (st.startsWith("CREATE UNIQUE INDEX CONCURRENTLY")) {
                out.add(new StoragePlan.Statement(
                        st, table, "SHARE UPDATE EXCLUSIVE", false, n, CATALOG_MS + n / ROWS_PER_MS));
            } else if (st.startsWith("DROP INDEX CONCURRENTLY")) {
                out.add(new StoragePlan.Statement(st, table, "SHARE UPDATE EXCLUSIVE", false, n, CATALOG_MS));
            } else if (st.startsWith("ALTER TABLE")) {
                out.add(new StoragePlan.Statement(st, table, "ACCESS EXCLUSIVE", true, n, CATALOG_MS));
            } else if (st.startsWith("CREATE TABLE IF NOT EXISTS") && rows.containsKey(table)) {
                // the table exists: PostgreSQL checks the name and does nothing
                out.add(new StoragePlan.Statement(st, table, "none (the table exists)", false, n, 0));
            } else {
                // CREATE TABLE, or an index created with its new, empty table
                out.add(new StoragePlan.Statement(st, table, "ACCESS EXCLUSIVE (new table)", true, 0, CATALOG_MS));
            }
        }
        return out;
    }

    /** The marker row {@code (schema_version, layouts)}, or null when there is none (or no marker table yet). */
    private Uni<Row> marker() {
        return missingAsNull(pool.query("SELECT schema_version, layouts FROM " + t("sync_schema") + " WHERE id = 1")
                .execute()
                .map(PgSql::first));
    }

    private Uni<Long> partitions() {
        return missingAsNull(pool.query("SELECT count(*) FROM " + t("sync_partitions"))
                        .execute()
                        .map(rs -> first(rs).getLong(0)))
                .map(n -> n == null ? 0L : n);
    }

    /** The marker's layouts; none without a marker or when they are unreadable (the step is refused then). */
    private static Map<String, TableLayout> layouts(Row marker) {
        if (marker == null) {
            return Map.of();
        }
        try {
            return TableLayout.parse(marker.getString(1));
        } catch (StorageException e) {
            return Map.of();
        }
    }

    /** The tables of {@code next} that exist before the step (not among the ones it creates), with their sizes. */
    private Uni<List<StoragePlan.TableSize>> tableSizes(
            CompiledSchema next, MigrationStep step, Map<String, TableLayout> stored) {
        Uni<List<StoragePlan.TableSize>> chain = Uni.createFrom().item(new ArrayList<>());
        if (step.storedVersion() == 0) {
            return chain;
        }
        for (TableSchema ts : next.tables()) {
            TableLayout before = stored.get(ts.name());
            if (step.newTables().contains(ts.name()) || before == null) {
                continue;
            }
            List<String> added = new ArrayList<>();
            for (int i = before.columns().size(); i < ts.columnCount(); i++) {
                added.add(ts.column(i).name());
            }
            String physical = t(RowTable.physicalName(ts.name()));
            // one row even for an empty table: its bytes, with a null partition
            String sql = "SELECT g.p, g.n, pg_total_relation_size(" + PgSql.lit(physical) + "::regclass)"
                    + " FROM (SELECT 1) one LEFT JOIN (SELECT \"_sync_partition\" AS p, count(*) AS n FROM " + physical
                    + " GROUP BY 1) g ON true ORDER BY 1";
            chain = chain.chain(list -> missingAsNull(pool.query(sql).execute().map(rs -> {
                        Map<String, Long> byPartition = new LinkedHashMap<>();
                        long rows = 0;
                        long bytes = 0;
                        for (Row r : rs) {
                            bytes = r.getLong(2);
                            if (r.getString(0) != null) {
                                byPartition.put(r.getString(0), r.getLong(1));
                                rows += r.getLong(1);
                            }
                        }
                        return new StoragePlan.TableSize(ts.name(), rows, bytes, byPartition, added);
                    }))
                    .map(size -> {
                        if (size != null) {
                            list.add(size);
                        }
                        return list;
                    }));
        }
        return chain;
    }

    /**
     * Client records updated at or after {@code sinceMs}, per schema version, with what their subscriptions on each
     * table reach ({@link #reach}, for the tables of {@code sizes}).
     */
    private Uni<List<StoragePlan.ClientVersion>> clients(long sinceMs, List<StoragePlan.TableSize> sizes) {
        String perVersion = "SELECT v, count(DISTINCT client_id), count(DISTINCT actor_id) FROM (SELECT c.client_id,"
                + " c.actor_id, COALESCE(c.schema_version, max(" + ENTRY_VERSION + "), 0) AS v" + entries()
                + " GROUP BY c.partition_id, c.client_id, c.actor_id, c.schema_version) r GROUP BY v ORDER BY v";
        String perTable = "SELECT " + CLIENT_VERSION + ", e->>'table', count(DISTINCT c.client_id)" + entries()
                + " AND e->>'table' IS NOT NULL GROUP BY 1, 2";
        Tuple since = Tuple.of(sinceMs);
        Map<Integer, Map<String, long[]>> byTable = new TreeMap<>();
        Uni<Void> reads = pool.preparedQuery(perTable)
                .execute(since)
                .invoke(rs -> {
                    for (Row r : rs) {
                        byTable.computeIfAbsent(r.getInteger(0), v -> new TreeMap<>())
                                .put(r.getString(1), new long[] {r.getLong(2), 0, 0});
                    }
                })
                .replaceWithVoid();
        for (StoragePlan.TableSize size : sizes) {
            reads = reads.chain(() -> reach(size.table(), sinceMs)
                    .invoke(rs -> {
                        for (Row r : rs) {
                            long[] reach = byTable.computeIfAbsent(r.getInteger(0), v -> new TreeMap<>())
                                    .computeIfAbsent(size.table(), t -> new long[3]);
                            reach[1] += r.getLong(1);
                            reach[2] += r.getLong(2);
                        }
                    })
                    .replaceWithVoid());
        }
        return missingAsNull(reads.chain(() -> pool.preparedQuery(perVersion).execute(since))
                        .map(versions -> {
                            List<StoragePlan.ClientVersion> out = new ArrayList<>();
                            for (Row r : versions) {
                                int v = r.getInteger(0);
                                Map<String, StoragePlan.TableReach> tables = new TreeMap<>();
                                byTable.getOrDefault(v, Map.of())
                                        .forEach((t, n) -> tables.put(t, new StoragePlan.TableReach(n[0], n[1], n[2])));
                                out.add(new StoragePlan.ClientVersion(v, r.getLong(1), r.getLong(2), tables));
                            }
                            return out;
                        }))
                .map(list -> list == null ? List.<StoragePlan.ClientVersion>of() : list);
    }

    /** A client record with each of its registered subscriptions, of the records updated at or after {@code $1}. */
    private String entries() {
        return " FROM " + t("sync_clients") + " c LEFT JOIN LATERAL jsonb_array_elements(CASE WHEN"
                + " jsonb_typeof(c.subscriptions) = 'array' THEN c.subscriptions ELSE '[]'::jsonb END) e ON true"
                + " WHERE c.updated_at_ms >= $1";
    }

    /**
     * Per client version, the rows of {@code table} its subscriptions on the table reach in their partition and their
     * bytes: a row is reached when, for every scope variable of the subscription's recorded effective scopes (the
     * requested ones when none were recorded), the row's stored scope value is one of the values ({@code *}: any).
     */
    private Uni<RowSet<Row>> reach(String table, long sinceMs) {
        String rows = t(RowTable.physicalName(table));
        String sql = "SELECT " + CLIENT_VERSION + ", count(*), COALESCE(sum(pg_column_size(r.*)), 0) FROM "
                + t("sync_clients") + " c CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN"
                + " jsonb_typeof(c.subscriptions) = 'array' THEN c.subscriptions ELSE '[]'::jsonb END) e"
                + " JOIN " + rows + " r ON r.\"_sync_partition\" = c.partition_id"
                + " WHERE c.updated_at_ms >= $1 AND e->>'table' = $2"
                + " AND NOT EXISTS (SELECT 1 FROM jsonb_each(CASE WHEN jsonb_typeof(e->'effectiveScopes') = 'object'"
                + " THEN e->'effectiveScopes' WHEN jsonb_typeof(e->'scopes') = 'object' THEN e->'scopes'"
                + " ELSE '{}'::jsonb END) s(k, vals) WHERE NOT (jsonb_typeof(vals) = 'array'"
                + " AND (vals ? '*' OR vals ? (r.\"_sync_scopes\" ->> k))))"
                + " GROUP BY 1";
        return pool.preparedQuery(sql).execute(Tuple.of(sinceMs, table));
    }

    /** {@code u}, with a missing table (a storage never ensured) read as a null item. */
    private static <T> Uni<T> missingAsNull(Uni<T> u) {
        return u.onFailure(e -> e instanceof PgException pe && UNDEFINED_TABLE.equals(pe.getSqlState()))
                .recoverWithNull();
    }
}
