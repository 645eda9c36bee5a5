package dev.syncular.server.storage.postgres;

import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.SnapshotRows;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.StoredRow;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;

/**
 * Bootstrap pages (§4.7): the current rows of a table matching the effective scopes (§3.2), in row-id byte
 * order after a cursor, through the row-to-scope index — full {@link StoredRow}s, or for snapshot pages
 * (§5.2 rows segments) only what a segment carries, bounded in rows and in bytes ({@link SnapshotRows}). One
 * pipelined round trip per page, under a plan guard.
 */
final class SnapshotReads {
    private final Pool pool;
    private final InstalledSchema installed;
    private final String rowScopesTable;

    SnapshotReads(Pool pool, String pgSchema, InstalledSchema installed) {
        this.pool = pool;
        this.installed = installed;
        this.rowScopesTable = PgSql.qualified(pgSchema, "sync_row_scopes");
    }

    Uni<List<StoredRow>> readRowsPage(
            String partition, String table, Map<String, Set<String>> scopes, String afterRowId, int limit) {
        return rowsPage(partition, table, scopes, afterRowId, limit, Long.MAX_VALUE, false)
                .map(SnapshotRows::rows);
    }

    /**
     * Without the scopes JSON and the column versions: no per-row JSON parse or version decode; at most
     * {@code limit} rows, ending with the row at which their bytes reach {@code maxBytes}.
     */
    Uni<SnapshotRows> readSnapshotPage(
            String partition,
            String table,
            Map<String, Set<String>> scopes,
            String afterRowId,
            int limit,
            long maxBytes) {
        return rowsPage(partition, table, scopes, afterRowId, limit, maxBytes, true);
    }

    private static final long[] NO_VERSIONS = new long[0];

    private Uni<SnapshotRows> rowsPage(
            String partition,
            String table,
            Map<String, Set<String>> scopes,
            String afterRowId,
            int limit,
            long maxBytes,
            boolean snapshot) {
        RowTable rt;
        String pageSql;
        Tuple args;
        try {
            if (scopes == null || scopes.isEmpty()) {
                throw new StorageException(
                        StorageException.INVALID_ARGUMENT,
                        "effective scopes must not be empty",
                        Map.of("table", table));
            }
            rt = installed.table(table);
            TreeMap<String, Set<String>> sorted = new TreeMap<>(scopes);
            String first = sorted.firstKey();
            // A plain range bound on both sides, never "$4 IS NULL OR ...": the prepared statement's generic plan
            // cannot turn that into an index condition, and every deep page would scan the scope from its start.
            // The first page starts at '' — every row id is >= ''.
            String bound = afterRowId == null ? ">=" : ">";
            args = Tuple.of(partition, table)
                    .addArrayOfString(rt.scopeKeys(first, sorted.get(first)))
                    .addValue(afterRowId == null ? "" : afterRowId)
                    .addValue(limit)
                    .addValue(Math.max(1, maxBytes));
            // With a single scope pattern the index keys of the first variable are exactly its values, so the
            // EXISTS below already is that variable's test: repeating it on the JSON makes the planner
            // estimate a handful of rows (and pick a parallel seq scan + sort over the ordered index scan).
            boolean firstCovered = rt.schema.scopePatterns().size() == 1;
            for (Map.Entry<String, Set<String>> e : sorted.entrySet()) {
                rt.scopeKeys(e.getKey(), e.getValue()); // validates the variable
                if (firstCovered && e.getKey().equals(first)) {
                    continue;
                }
                args.addValue(e.getKey()).addArrayOfString(e.getValue().toArray(String[]::new));
            }
            int extra = (args.size() - 6) / 2;
            pageSql = rt.pageSql((snapshot ? "snapshot:" : "rows:") + extra + bound, k -> {
                // The byte bound ($6): the running sum of the rows' measure up to each row; the outer query keeps the
                // rows that start below the bound (so at least one, and the row that reaches it). The window streams
                // in the index order: no sort, and the LIMIT still ends the scan (SnapshotPagePlanTest). One window
                // column only: a second one (the next row's id, or the row's own measure) cost as much again.
                StringBuilder sb = new StringBuilder("SELECT q.* FROM (SELECT ")
                        .append(snapshot ? rt.snapshotSelectList : rt.selectList)
                        .append(", sum(")
                        .append(rt.rowBytesSql)
                        .append(") OVER w AS \"_sync_run\"")
                        .append(" FROM ")
                        .append(rt.qualifiedName)
                        .append(" r WHERE r.\"_sync_partition\" = $1")
                        .append(" AND r.\"_sync_row_id\" ")
                        .append(bound)
                        .append(" $4::text COLLATE \"C\"")
                        .append(" AND EXISTS (SELECT 1 FROM ")
                        .append(rowScopesTable)
                        .append(" s WHERE s.partition_id = $1")
                        .append(" AND s.tbl = $2 AND s.scope_key = ANY($3) AND s.row_id = r.\"_sync_row_id\"")
                        // the same lower bound on the index side: without it the merge join rescans the scope's
                        // index from its first row on every page, and a bootstrap costs O(rows²)
                        .append(" AND s.row_id ")
                        .append(bound)
                        .append(" $4::text COLLATE \"C\")");
                int p = 6;
                for (int i = 0; i < extra; i++) {
                    sb.append(" AND (r.\"_sync_scopes\" ->> $")
                            .append(++p)
                            .append("::text) = ANY($")
                            .append(++p)
                            .append("::text[])");
                }
                return sb.append(" WINDOW w AS (ORDER BY r.\"_sync_row_id\" COLLATE \"C\" ROWS UNBOUNDED PRECEDING)")
                        .append(" ORDER BY r.\"_sync_row_id\" COLLATE \"C\" LIMIT $5) q")
                        .append(" WHERE q.\"_sync_run\" - (")
                        .append(rt.pageRowBytesSql)
                        .append(") < $6")
                        .toString();
            });
        } catch (RuntimeException e) {
            return Uni.createFrom().failure(e);
        }
        // Plan guard: right after a bulk load the statistics lag or are missing, and the planner's choices
        // (nested loops, hash aggregates, bitmap scans with an external sort) cost seconds per page. With
        // sequential scans, nested loops, bitmap scans, sorts and parallel workers off for this read-only
        // transaction, the plan is the ordered primary-key scan merged with the scope index, stopping at the
        // LIMIT, whatever the statistics say (figures: docs/BENCHMARKS.md, "Measurements behind code choices").
        // BEGIN with the settings, the page and COMMIT go out pipelined: one round trip per page, not four.
        return pool.withConnection(conn -> {
                    CompletableFuture<RowSet<Row>> begin = conn.query("BEGIN; SET LOCAL enable_seqscan = off;"
                                    + " SET LOCAL enable_nestloop = off; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_sort = off;"
                                    + " SET LOCAL max_parallel_workers_per_gather = 0")
                            .execute()
                            .subscribeAsCompletionStage();
                    CompletableFuture<RowSet<Row>> page =
                            conn.preparedQuery(pageSql).execute(args).subscribeAsCompletionStage();
                    // after a failed page this COMMIT only ends the aborted transaction (PostgreSQL answers ROLLBACK)
                    CompletableFuture<RowSet<Row>> end =
                            conn.query("COMMIT").execute().subscribeAsCompletionStage();
                    // all three are awaited before the connection goes back to the pool; the first failure wins
                    return Uni.createFrom()
                            .completionStage(CompletableFuture.allOf(
                                    begin.handle((v, e) -> null),
                                    page.handle((v, e) -> null),
                                    end.handle((v, e) -> null)))
                            .chain(() -> Uni.createFrom().completionStage(begin))
                            .chain(() -> Uni.createFrom().completionStage(end))
                            .chain(() -> Uni.createFrom().completionStage(page));
                })
                .map(rs -> {
                    List<StoredRow> out = new ArrayList<>(rs.size());
                    TableSchema ts = rt.schema;
                    long bytes = 0;
                    for (Row r : rs) {
                        bytes = r.getLong("_sync_run");
                        if (snapshot) {
                            Object[] values = new Object[ts.columnCount()];
                            for (int i = 0; i < values.length; i++) {
                                values[i] = ProjectionRows.readValue(
                                        r, 2 + i, ts.column(i).type());
                            }
                            out.add(new StoredRow(r.getString(0), r.getLong(1), values, NO_VERSIONS, Map.of()));
                        } else {
                            out.add(ProjectionRows.storedRow(ts, r));
                        }
                    }
                    // cut: the rows reached the bound before the row limit (fewer rows than asked for do not mean the
                    // end; a read whose last row is the scope's last and reaches the bound is cut too)
                    return new SnapshotRows(out, bytes, out.size() < limit && bytes >= maxBytes);
                });
    }
}
