package dev.syncular.server.storage.postgres;

import static dev.syncular.server.storage.postgres.PgSql.lit;

import java.util.ArrayList;
import java.util.List;

/**
 * The physical layout of the commit log (§2.1 commits, §2.2 changes, the §4.5 scope-key index): the tables
 * {@code sync_commits}, {@code sync_changes} and {@code sync_commit_scopes}, each either one plain table
 * ({@link #PLAIN}) or hash-partitioned by {@code partition_id} into {@code leaves} tables named
 * {@code <table>_p00}, {@code _p01}, … Every key of the three begins with {@code partition_id}, so each statement
 * of one SSP2 partition reads and writes one leaf, and a leaf is vacuumed on its own (a delete-heavy retention
 * leaves its dead rows in many small tables instead of one large one). The same column is the distribution
 * column a sharded PostgreSQL (Citus) needs (docs/SCALING.md).
 *
 * <p>A new database gets the layout of {@code syncular.storage.log-partitions}; an existing one keeps its layout
 * until {@link LogRepartition} moves it (the {@code repartition-log} command, online). The number of leaves is
 * fixed when the tables are created.
 */
final class LogLayout {
    /** {@code syncular.storage.log-partitions} value for one plain table each (the layout of 0.2.0 and earlier). */
    static final int PLAIN = 0;
    /** The most leaves a log table may have. */
    static final int MAX_LEAVES = 256;

    /**
     * One log table: its columns (without the key), its primary-key columns and their types, and its secondary
     * indexes.
     *
     * @param indexes {@code name}, {@code (columns)} pairs
     */
    record LogTable(String name, String columns, String primaryKey, String keyTypes, List<String[]> indexes) {}

    /** The three log tables, in append order. */
    static final List<LogTable> TABLES = List.of(
            new LogTable(
                    "sync_commits",
                    "partition_id text NOT NULL, commit_seq bigint NOT NULL, created_at_ms bigint NOT NULL,"
                            + " actor_id text NOT NULL, client_id text NOT NULL, client_commit_id text NOT NULL,"
                            + " change_count integer NOT NULL, tables text[] NOT NULL, writer_version bigint",
                    "partition_id, commit_seq",
                    "text, bigint",
                    List.of()),
            new LogTable(
                    "sync_changes",
                    "partition_id text NOT NULL, commit_seq bigint NOT NULL, change_index integer NOT NULL,"
                            + " tbl text NOT NULL, row_id text COLLATE \"C\" NOT NULL, op integer NOT NULL,"
                            + " row_version bigint, scopes jsonb NOT NULL, payload bytea",
                    "partition_id, commit_seq, change_index",
                    "text, bigint, integer",
                    List.of()),
            new LogTable(
                    "sync_commit_scopes",
                    "partition_id text NOT NULL, tbl text NOT NULL, scope_key text NOT NULL, commit_seq bigint NOT NULL",
                    "partition_id, tbl, scope_key, commit_seq",
                    "text, text, text, bigint",
                    // pruning by seq; log windows probe the primary key
                    List.<String[]>of(new String[] {"sync_commit_scopes_by_seq", "(partition_id, commit_seq)"})));

    private LogLayout() {}

    /** Checks a leaf count: {@link #PLAIN} or 1..{@value #MAX_LEAVES}. */
    static int checkedLeaves(int leaves) {
        if (leaves < PLAIN || leaves > MAX_LEAVES) {
            throw new IllegalArgumentException("log partitions must be 0 (plain tables) to " + MAX_LEAVES);
        }
        return leaves;
    }

    /** The name of leaf {@code i} of {@code table}. */
    static String leaf(String table, int i) {
        return table + "_p" + (i < 10 ? "0" : "") + i;
    }

    /**
     * The statements creating {@code table} in {@code pgSchema} with {@code leaves} leaves (or plain). With leaves,
     * the leaves are created with the parent (one step, so a partitioned parent always has them).
     */
    static String createStatements(String pgSchema, LogTable table, int leaves) {
        String create = "CREATE TABLE IF NOT EXISTS " + PgSql.qualified(pgSchema, table.name()) + " (" + table.columns()
                + ", PRIMARY KEY (" + table.primaryKey() + "))";
        return leaves == PLAIN
                ? create
                : create + " PARTITION BY HASH (partition_id)" + leafStatements(pgSchema, table, table.name(), leaves);
    }

    /** {@code ; CREATE TABLE <leaf> PARTITION OF <parent> ...} for each of {@code leaves} leaves of {@code table}. */
    static String leafStatements(String pgSchema, LogTable table, String parent, int leaves) {
        StringBuilder sql = new StringBuilder();
        for (int i = 0; i < leaves; i++) {
            sql.append("; CREATE TABLE IF NOT EXISTS ")
                    .append(PgSql.qualified(pgSchema, leaf(table.name(), i)))
                    .append(" PARTITION OF ")
                    .append(PgSql.qualified(pgSchema, parent))
                    .append(" FOR VALUES WITH (MODULUS ")
                    .append(leaves)
                    .append(", REMAINDER ")
                    .append(i)
                    .append(")");
        }
        return sql.toString();
    }

    /** {@code CREATE INDEX} of {@code table}'s secondary indexes on the table named {@code as}, each name + suffix. */
    static List<String> indexStatements(String pgSchema, LogTable table, String as, String suffix) {
        List<String> sql = new ArrayList<>();
        for (String[] index : table.indexes()) {
            sql.add("CREATE INDEX IF NOT EXISTS " + PgSql.q(index[0] + suffix) + " ON " + PgSql.qualified(pgSchema, as)
                    + " " + index[1]);
        }
        return sql;
    }

    /** A boolean SQL expression: {@code table} of {@code pgSchema} is hash-partitioned. */
    static String partitionedProbe(String pgSchema, String table) {
        return "EXISTS (SELECT 1 FROM pg_partitioned_table WHERE partrelid = to_regclass("
                + lit(PgSql.qualified(pgSchema, table)) + "))";
    }
}
