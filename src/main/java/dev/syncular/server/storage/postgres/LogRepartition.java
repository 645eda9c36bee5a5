package dev.syncular.server.storage.postgres;

import static dev.syncular.server.storage.postgres.PgSql.first;
import static dev.syncular.server.storage.postgres.PgSql.lit;
import static dev.syncular.server.storage.postgres.PgSql.q;
import static dev.syncular.server.storage.postgres.StartupDdl.ddlTransaction;
import static dev.syncular.server.storage.postgres.StartupDdl.execAll;
import static dev.syncular.server.storage.postgres.StartupDdl.xactLock;

import dev.syncular.server.storage.LogRepartitioning;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import io.vertx.pgclient.PgException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * The online move of a plain commit log to the hash-partitioned {@link LogLayout} while pods keep pushing, pulling
 * and pruning (the {@code repartition-log} command). Three phases, each safe to interrupt and to run again:
 *
 * <ol>
 *   <li><b>Prepare</b> (one short DDL transaction): each log table gets its partitioned copy {@code <table>_next}
 *       (its columns {@code LIKE} the table's, so rows copy as they are) with its leaves and indexes, and two
 *       statement-level triggers on the table that repeat every insert and delete on the copy, in the same
 *       transaction (the log's rows are never updated). A progress row per table ({@code sync_log_repartition})
 *       keeps the copy's keyset cursor.
 *   <li><b>Copy</b>: the rows that were there before, in key order, a batch a transaction, each batch and its
 *       cursor committed together. A batch locks the rows it copies {@code FOR KEY SHARE}: a prune deleting one
 *       of them waits for the batch and its trigger then deletes the copied row too, and a row deleted before
 *       the batch is not read — no pruned commit comes back.
 *   <li><b>Swap</b> (one short transaction under {@code lock_timeout}, retried): the three tables locked, the old
 *       ones dropped with their triggers, the copies renamed into place with the index names the start-up DDL
 *       checks, the §2.4 writer-fence trigger created on the new {@code sync_commits}.
 * </ol>
 *
 * During the copy every log write is written twice; the swap holds the log tables for milliseconds (pushes and
 * reads wait, none fails). Statements prepared on other pods' connections name the tables, not their ids:
 * PostgreSQL plans them again against the new tables.
 */
final class LogRepartition implements LogRepartitioning {
    private static final String PROGRESS = "sync_log_repartition";
    private static final String NEXT = "_next";

    private final Pool pool;
    private final String pgSchema;

    LogRepartition(Pool pool, String pgSchema) {
        this.pool = pool;
        this.pgSchema = pgSchema;
    }

    private String t(String name) {
        return PgSql.qualified(pgSchema, name);
    }

    private String lockName() {
        return "syncular:log-repartition:" + pgSchema;
    }

    @Override
    public Uni<Layout> layout() {
        List<String> probes = new ArrayList<>();
        for (LogLayout.LogTable table : LogLayout.TABLES) {
            probes.add("(SELECT count(*) FROM pg_inherits WHERE inhparent = to_regclass(" + lit(t(table.name()))
                    + "))::int");
        }
        return pool.query("SELECT " + String.join(", ", probes) + ", to_regclass(" + lit(t(PROGRESS)) + ") IS NOT NULL")
                .execute()
                .map(rs -> {
                    Row r = first(rs);
                    int leaves = r.getInteger(0);
                    for (int i = 1; i < LogLayout.TABLES.size(); i++) {
                        leaves = Math.min(leaves, r.getInteger(i));
                    }
                    return new Layout(leaves, r.getBoolean(LogLayout.TABLES.size()));
                });
    }

    @Override
    public Uni<Report> repartition(int leaves, int batchRows, Consumer<String> progress) {
        LogLayout.checkedLeaves(leaves);
        if (leaves == LogLayout.PLAIN || batchRows < 1) {
            throw new IllegalArgumentException("leaves must be 1.." + LogLayout.MAX_LEAVES + ", batchRows positive");
        }
        return layout().chain(before -> {
            if (before.leaves() > 0 && !before.moving()) {
                progress.accept("the log is already partitioned (" + before.leaves() + " leaves): nothing to do");
                return Uni.createFrom().item(new Report(before.leaves(), before.leaves(), 0));
            }
            long[] copied = {0};
            Uni<Void> chain = prepare(leaves).invoke(() -> progress.accept("prepared: copies and triggers in place"));
            for (LogLayout.LogTable table : LogLayout.TABLES) {
                chain = chain.chain(() -> copyAll(table, batchRows, copied, progress));
            }
            return chain.chain(this::swap)
                    .invoke(() -> progress.accept("swapped: the log is hash-partitioned"))
                    .chain(this::layout)
                    .map(after -> new Report(before.leaves(), after.leaves(), copied[0]));
        });
    }

    /** Phase 1: the copies, their indexes, the mirroring triggers and the progress rows (idempotent). */
    private Uni<Void> prepare(int leaves) {
        List<String> sql = new ArrayList<>();
        sql.add("CREATE TABLE IF NOT EXISTS " + t(PROGRESS) + " (tbl text PRIMARY KEY, cursor jsonb,"
                + " copied bigint NOT NULL DEFAULT 0, done boolean NOT NULL DEFAULT false)");
        for (LogLayout.LogTable table : LogLayout.TABLES) {
            String name = table.name();
            String next = name + NEXT;
            // a copy made by an interrupted run is kept as it is (with the leaves that run asked for)
            String create = "CREATE TABLE " + t(next) + " (LIKE " + t(name) + " INCLUDING DEFAULTS INCLUDING STORAGE,"
                    + " CONSTRAINT " + q(next + "_pkey") + " PRIMARY KEY (" + table.primaryKey() + "))"
                    + " PARTITION BY HASH (partition_id)" + LogLayout.leafStatements(pgSchema, table, next, leaves);
            StringBuilder absent = new StringBuilder("DO $$ BEGIN IF to_regclass(" + lit(t(next)) + ") IS NULL THEN");
            for (String statement : create.split("; ")) {
                absent.append(" EXECUTE ").append(lit(statement)).append(";");
            }
            sql.add(absent.append(" END IF; END $$").toString());
            sql.addAll(LogLayout.indexStatements(pgSchema, table, next, NEXT));
            sql.add("INSERT INTO " + t(PROGRESS) + " (tbl) VALUES (" + lit(name) + ") ON CONFLICT DO NOTHING");
            String keyMatch = keyMatch(table, "n", "r");
            sql.add("CREATE OR REPLACE FUNCTION " + t(name + "_mirror_insert")
                    + "() RETURNS trigger LANGUAGE plpgsql AS $fn$ BEGIN INSERT INTO " + t(next)
                    + " SELECT * FROM added ON CONFLICT DO NOTHING; RETURN NULL; END $fn$");
            sql.add("CREATE OR REPLACE FUNCTION " + t(name + "_mirror_delete")
                    + "() RETURNS trigger LANGUAGE plpgsql AS $fn$ BEGIN DELETE FROM " + t(next)
                    + " n USING removed r WHERE " + keyMatch + "; RETURN NULL; END $fn$");
            sql.add("CREATE OR REPLACE TRIGGER " + q(name + "_mirror_insert") + " AFTER INSERT ON " + t(name)
                    + " REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION "
                    + t(name + "_mirror_insert") + "()");
            sql.add("CREATE OR REPLACE TRIGGER " + q(name + "_mirror_delete") + " AFTER DELETE ON " + t(name)
                    + " REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION "
                    + t(name + "_mirror_delete") + "()");
        }
        return ddlTransaction(pool, conn -> xactLock(conn, lockName()).chain(() -> execAll(conn, sql)));
    }

    /** Phase 2 for one table: batches from its stored cursor until one reads no row (the table is then done). */
    private Uni<Void> copyAll(LogLayout.LogTable table, int batchRows, long[] copied, Consumer<String> progress) {
        return pool.preparedQuery("SELECT cursor::text, done FROM " + t(PROGRESS) + " WHERE tbl = $1")
                .execute(Tuple.of(table.name()))
                .chain(rs -> {
                    Row r = first(rs);
                    return r.getBoolean(1)
                            ? Uni.createFrom().voidItem()
                            : copyFrom(
                                    table,
                                    copyBatch(table),
                                    r.getString(0) != null ? r.getString(0) : lowestKey(table),
                                    batchRows,
                                    copied,
                                    progress);
                });
    }

    /**
     * The batches of {@code table} after {@code cursor}, one after the other until one reads no row: iterated, never
     * chained recursively (a 10 M-row table is thousands of batches; see {@link Pruning}).
     */
    private Uni<Void> copyFrom(
            LogLayout.LogTable table,
            String batch,
            String cursor,
            int batchRows,
            long[] copied,
            Consumer<String> progress) {
        String[] at = {cursor};
        return Multi.createBy()
                .repeating()
                .uni(
                        () -> at,
                        c -> pool.preparedQuery(batch)
                                .execute(Tuple.of(table.name(), batchRows, c[0]))
                                // a prune deleting rows of the batch may meet its row locks in another order
                                .onFailure(e -> e instanceof PgException pe && "40P01".equals(pe.getSqlState()))
                                .retry()
                                .atMost(20)
                                .map(rs -> {
                                    Row b = first(rs);
                                    long rows = b.getLong(0);
                                    if (rows > 0) {
                                        c[0] = b.getString(1);
                                        copied[0] += rows;
                                        progress.accept(
                                                table.name() + ": " + rows + " rows copied (" + copied[0] + " in all)");
                                    }
                                    return rows;
                                }))
                .whilst(rows -> rows > 0)
                .collect()
                .last()
                .replaceWithVoid();
    }

    /** A key below every stored one: {@code ''} and the type's least value, as the cursor's JSON array. */
    private static String lowestKey(LogLayout.LogTable table) {
        List<String> parts = new ArrayList<>();
        for (String type : table.keyTypes().split(",\\s*")) {
            parts.add(
                    switch (type) {
                        case "text" -> "\"\"";
                        case "bigint" -> String.valueOf(Long.MIN_VALUE);
                        case "integer" -> String.valueOf(Integer.MIN_VALUE);
                        default -> throw new IllegalStateException("no least value of " + type);
                    });
        }
        return "[" + String.join(",", parts) + "]";
    }

    /**
     * One batch of {@code table} ({@code $1} its name, {@code $2} the batch size, {@code $3} the cursor, a JSON array
     * of the last key copied): up to {@code $2} rows after the cursor, in key order (a range scan of the key),
     * locked {@code FOR KEY SHARE}, inserted into the copy (a row the trigger copied already is skipped); the stored
     * cursor moves to the batch's last key, and an empty batch marks the table done. Yields the rows read and the
     * new cursor.
     */
    private String copyBatch(LogLayout.LogTable table) {
        String[] key = table.primaryKey().split(",\\s*");
        String[] types = table.keyTypes().split(",\\s*");
        StringBuilder after = new StringBuilder("(");
        StringBuilder last = new StringBuilder("jsonb_build_array(");
        for (int i = 0; i < key.length; i++) {
            after.append(i == 0 ? "" : ", ")
                    .append("($3::text::jsonb->>")
                    .append(i)
                    .append(")::")
                    .append(types[i]);
            last.append(i == 0 ? "" : ", ").append(key[i]);
        }
        after.append(")");
        last.append(")");
        String keyList = String.join(", ", key);
        return "WITH b AS (SELECT * FROM " + t(table.name()) + " WHERE (" + keyList + ") > " + after + " ORDER BY "
                + keyList + " LIMIT $2 FOR KEY SHARE),"
                + " i AS (INSERT INTO " + t(table.name() + NEXT) + " SELECT * FROM b ON CONFLICT DO NOTHING),"
                + " n AS (SELECT count(*) AS rows, (SELECT " + last + " FROM b ORDER BY "
                + String.join(" DESC, ", key) + " DESC LIMIT 1) AS last FROM b)"
                + " UPDATE " + t(PROGRESS) + " g SET cursor = COALESCE(n.last, g.cursor), copied = g.copied + n.rows,"
                + " done = (n.rows = 0) FROM n WHERE g.tbl = $1 RETURNING n.rows, n.last::text";
    }

    /** Phase 3: the copies take the tables' places, in one transaction holding the three tables. */
    private Uni<Void> swap() {
        List<String> sql = new ArrayList<>();
        List<String> tables = new ArrayList<>();
        for (LogLayout.LogTable table : LogLayout.TABLES) {
            tables.add(t(table.name()));
        }
        sql.add("LOCK TABLE " + String.join(", ", tables) + " IN ACCESS EXCLUSIVE MODE");
        sql.add("DO $$ BEGIN IF EXISTS (SELECT 1 FROM " + t(PROGRESS) + " WHERE NOT done) THEN"
                + " RAISE EXCEPTION 'the log copy is not complete'; END IF; END $$");
        for (LogLayout.LogTable table : LogLayout.TABLES) {
            String name = table.name();
            sql.add("DROP TABLE " + t(name));
            sql.add("DROP FUNCTION " + t(name + "_mirror_insert") + "(), " + t(name + "_mirror_delete") + "()");
            sql.add("ALTER TABLE " + t(name + NEXT) + " RENAME TO " + q(name));
            sql.add("ALTER INDEX " + t(name + NEXT + "_pkey") + " RENAME TO " + q(name + "_pkey"));
            for (String[] index : table.indexes()) {
                sql.add("ALTER INDEX " + t(index[0] + NEXT) + " RENAME TO " + q(index[0]));
            }
        }
        sql.add(CoreTables.fenceTrigger(pgSchema, "sync_commits"));
        sql.add("DROP TABLE " + t(PROGRESS));
        return ddlTransaction(pool, conn -> xactLock(conn, lockName()).chain(() -> execAll(conn, sql)));
    }

    /** {@code n.k1 = r.k1 AND ...} over {@code table}'s key. */
    private static String keyMatch(LogLayout.LogTable table, String left, String right) {
        List<String> parts = new ArrayList<>();
        for (String k : table.primaryKey().split(",\\s*")) {
            parts.add(left + "." + k + " = " + right + "." + k);
        }
        return String.join(" AND ", parts);
    }
}
