package dev.syncular.server.testsupport;

import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import java.time.Duration;

/**
 * A long commit log made with SQL directly (for pruning proofs and benchmarks): commits {@code from..to} of a
 * registered partition, each with one change to table {@code tbl} and one scope-index entry, and the partition's
 * {@code max_commit_seq} moved to {@code to}. Much faster than pushing them; the rows they would have written are
 * not materialized (pruning never reads them).
 */
public final class GeneratedCommits {
    private static final Duration WAIT = Duration.ofMinutes(10);

    private GeneratedCommits() {
    }

    public static void generate(Pool pool, String pgSchema, String partition, String tbl, long from, long to) {
        String s = "\"" + pgSchema + "\".";
        Tuple args = Tuple.of(partition, from, to, tbl);
        pool.preparedQuery("INSERT INTO " + s + "sync_commits (partition_id, commit_seq, created_at_ms, actor_id, client_id,"
                + " client_commit_id, change_count, tables, writer_version) SELECT $1, g, 1, 'gen', 'gen', 'gen-' || g, 1,"
                + " ARRAY[$4::text], 1 FROM generate_series($2::bigint, $3::bigint) g").execute(args).await().atMost(WAIT);
        pool.preparedQuery("INSERT INTO " + s + "sync_changes (partition_id, commit_seq, change_index, tbl, row_id, op,"
                + " row_version, scopes, payload) SELECT $1, g, 0, $4, 'gen-' || g, 1, g, '{}'::jsonb, NULL"
                + " FROM generate_series($2::bigint, $3::bigint) g").execute(args).await().atMost(WAIT);
        pool.preparedQuery("INSERT INTO " + s + "sync_commit_scopes (partition_id, tbl, scope_key, commit_seq)"
                + " SELECT $1, $4, 'gen', g FROM generate_series($2::bigint, $3::bigint) g").execute(args).await().atMost(WAIT);
        pool.preparedQuery("UPDATE " + s + "sync_partitions SET max_commit_seq = GREATEST(max_commit_seq, $2) WHERE partition_id = $1")
                .execute(Tuple.of(partition, to)).await().atMost(WAIT);
    }
}
