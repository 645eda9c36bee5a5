package dev.syncular.server.testsupport;

import io.vertx.mutiny.sqlclient.Pool;
import java.util.List;

/**
 * A long commit log made with SQL directly (for pruning proofs and benchmarks): commits {@code from..to} of a
 * registered partition, each with one change to table {@code tbl} and one scope-index entry, and the partition's
 * {@code max_commit_seq} moved to {@code to}. Much faster than pushing them; the rows they would have written are
 * not materialized (pruning never reads them). Run the statements in one transaction that holds the partition
 * row ({@link #lockPartition}) when pushes may append to the partition meanwhile.
 */
public final class GeneratedCommits {
    private GeneratedCommits() {}

    /** The partition row {@code FOR UPDATE}, yielding its {@code max_commit_seq} (the first statement). */
    public static String lockPartition(String pgSchema, String partition) {
        return "SELECT max_commit_seq FROM \"" + pgSchema + "\".sync_partitions WHERE partition_id = " + lit(partition)
                + " FOR UPDATE";
    }

    /** The statements writing commits {@code from..to}, in order. */
    public static List<String> statements(String pgSchema, String partition, String tbl, long from, long to) {
        String s = "\"" + pgSchema + "\".";
        String p = lit(partition);
        String range = " FROM generate_series(" + from + "::bigint, " + to + "::bigint) g";
        return List.of(
                "INSERT INTO " + s + "sync_commits (partition_id, commit_seq, created_at_ms, actor_id, client_id,"
                        + " client_commit_id, change_count, tables, writer_version) SELECT " + p
                        + ", g, 1, 'gen', 'gen',"
                        + " 'gen-' || g, 1, ARRAY[" + lit(tbl) + "], 1" + range,
                "INSERT INTO " + s
                        + "sync_changes (partition_id, commit_seq, change_index, tbl, row_id, op, row_version,"
                        + " scopes, payload) SELECT " + p + ", g, 0, " + lit(tbl)
                        + ", 'gen-' || g, 1, g, '{}'::jsonb, NULL" + range,
                "INSERT INTO " + s + "sync_commit_scopes (partition_id, tbl, scope_key, commit_seq) SELECT " + p + ", "
                        + lit(tbl) + ", 'gen', g" + range,
                "UPDATE " + s + "sync_partitions SET max_commit_seq = GREATEST(max_commit_seq, " + to
                        + ") WHERE partition_id = " + p);
    }

    /** {@link #statements} in one transaction on {@code pool}, holding the partition row: yields the last seq written. */
    public static long append(Pool pool, String pgSchema, String partition, String tbl, long count) {
        try (HeldTransaction t = HeldTransaction.begin(pool)) {
            long max = t.execute(lockPartition(pgSchema, partition))
                    .iterator()
                    .next()
                    .getLong(0);
            for (String sql : statements(pgSchema, partition, tbl, max + 1, max + count)) {
                t.execute(sql);
            }
            t.commit();
            return max + count;
        }
    }

    private static String lit(String text) {
        return "'" + text.replace("'", "''") + "'";
    }
}
