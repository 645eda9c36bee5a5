package dev.syncular.server.storage.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.testsupport.ScratchSchemas;
import dev.syncular.server.testsupport.TestPostgres;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The commit-window statement of a pull (§4.5) looks every commit and change of the window up by primary key,
 * whatever PostgreSQL's statistics say. The case that went wrong: a partition created since the tables were
 * last analyzed is estimated at one row, and the statement as plain joins then scanned the whole partition once
 * per seq of the window (rows removed by a join filter; seconds per pull in the realtime benchmark's round
 * phase). Real PostgreSQL, the production DDL and statement, the plan PostgreSQL actually runs.
 */
class CommitWindowPlanTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static Vertx vertx;
    private static Pool pool;
    private static String schema;
    private static PostgresSyncStorage storage;

    @BeforeAll
    static void start() {
        vertx = Vertx.vertx();
        pool = TestPostgres.pool(vertx, 2);
        schema = "sync_plan_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        storage = new PostgresSyncStorage(pool, schema, PostgresSyncStorage.Settings.DEFAULTS);
        storage.ensureSchema(ScratchSchemas.ONE_TABLE).await().atMost(WAIT);
    }

    @AfterAll
    static void stop() {
        pool.query("DROP SCHEMA IF EXISTS " + PgSql.q(schema) + " CASCADE")
                .execute()
                .await()
                .atMost(WAIT);
        pool.close().await().atMost(WAIT);
        vertx.close().await().atMost(WAIT);
    }

    /** Commits {@code from..to} of {@code partition}, one change each to table {@code t} in scope {@code k:1}. */
    private static void seed(String partition, int from, int to) {
        String p = "'" + partition + "'";
        String s = PgSql.q(schema);
        sql("INSERT INTO " + s + ".sync_commits (partition_id, commit_seq, created_at_ms, actor_id, client_id,"
                + " client_commit_id, change_count, tables, writer_version) SELECT " + p
                + ", g, 1, 'a', 'c', 'cc' || g,"
                + " 1, '{t}', 1 FROM generate_series(" + from + ", " + to + ") g");
        sql("INSERT INTO " + s + ".sync_changes (partition_id, commit_seq, change_index, tbl, row_id, op, row_version,"
                + " scopes, payload) SELECT " + p + ", g, 0, 't', 'r' || g, 1, 1, '{}'::jsonb, '\\x00'::bytea"
                + " FROM generate_series(" + from + ", " + to + ") g");
        sql("INSERT INTO " + s + ".sync_commit_scopes (partition_id, tbl, scope_key, commit_seq) SELECT " + p
                + ", 't', 'k:1', g FROM generate_series(" + from + ", " + to + ") g");
    }

    private static void sql(String statement) {
        pool.query(statement).execute().await().atMost(WAIT);
    }

    @Test
    void aPartitionTheStatisticsDoNotKnowIsReadByPrimaryKey() throws Exception {
        String s = PgSql.q(schema);
        for (String table : List.of("sync_commits", "sync_changes", "sync_commit_scopes")) {
            // the statistics stay as ANALYZE leaves them below (autovacuum off on every leaf of the hash-partitioned
            // log); rows go straight in, past the writer fence
            sql("DO $$ DECLARE r record; BEGIN FOR r IN SELECT inhrelid::regclass AS leaf FROM pg_inherits"
                    + " WHERE inhparent = '" + s + "." + table + "'::regclass"
                    + " UNION SELECT '" + s + "." + table + "'::regclass WHERE NOT EXISTS (SELECT 1 FROM"
                    + " pg_partitioned_table WHERE partrelid = '" + s + "." + table + "'::regclass) LOOP"
                    + " EXECUTE format('ALTER TABLE %s SET (autovacuum_enabled = false)', r.leaf); END LOOP; END $$");
            sql("ALTER TABLE " + s + "." + table + " DISABLE TRIGGER USER");
        }
        seed("known-a", 1, 3000);
        seed("known-b", 1, 3000);
        sql("ANALYZE " + s + ".sync_commits, " + s + ".sync_changes, " + s + ".sync_commit_scopes");
        seed("fresh", 1, 20_000); // created since the last ANALYZE: estimated at one row

        JsonNode plan = explainWindow("fresh", 1001L);
        List<JsonNode> nodes = new ArrayList<>();
        collect(plan, nodes);
        assertEquals(1000L, plan.get("Actual Rows").asLong(), "one row per seq of the window");
        int lookups = 0;
        for (JsonNode n : nodes) {
            assertTrue(n.path("Rows Removed by Join Filter").asLong() == 0, "a join filter discarded rows: " + n);
            // a leaf of the hash-partitioned log (LogLayout): sync_commits_p07
            String relation = n.path("Relation Name").asText("").replaceFirst("_p\\d+$", "");
            if (relation.equals("sync_commits") || relation.equals("sync_changes")) {
                lookups++;
                assertTrue(
                        n.path("Index Cond").asText("").contains("commit_seq ="),
                        relation + " is not looked up by the window's seq: " + n);
                assertTrue(n.path("Actual Rows").asLong() <= 1, relation + " read more than its row per seq: " + n);
            }
        }
        assertEquals(2, lookups, "one lookup each of sync_commits and sync_changes: " + plan);
    }

    /**
     * The statement reads no more rows than the window can use: seqs stop once the commits before them hold the
     * change budget ({@code $7}, the pull's change limit and one). 200 commits of 50 changes each, a window cut at
     * 100 changes: 3 commits (150 rows) read, not 1,000 seqs' worth (10,000 rows; with 200-change commits a push
     * flood's pulls read 200,000 rows a statement and two pods ran out of heap).
     */
    @Test
    void aWindowOfLargeCommitsReadsRowsBoundedByTheChangeBudget() throws Exception {
        String s = PgSql.q(schema);
        for (String table : List.of("sync_commits", "sync_changes", "sync_commit_scopes")) {
            sql("ALTER TABLE " + s + "." + table + " DISABLE TRIGGER USER");
        }
        sql("INSERT INTO " + s + ".sync_commits (partition_id, commit_seq, created_at_ms, actor_id, client_id,"
                + " client_commit_id, change_count, tables, writer_version) SELECT 'big', g, 1, 'a', 'c', 'cc' || g,"
                + " 50, '{t}', 1 FROM generate_series(1, 200) g");
        sql("INSERT INTO " + s + ".sync_changes (partition_id, commit_seq, change_index, tbl, row_id, op, row_version,"
                + " scopes, payload) SELECT 'big', g, i, 't', 'r' || g || '-' || i, 1, 1, '{}'::jsonb, '\\x00'::bytea"
                + " FROM generate_series(1, 200) g, generate_series(0, 49) i");
        sql("INSERT INTO " + s + ".sync_commit_scopes (partition_id, tbl, scope_key, commit_seq) SELECT 'big', 't',"
                + " 'k:1', g FROM generate_series(1, 200) g");
        JsonNode plan = explainWindow("big", 101L);
        assertEquals(150L, plan.get("Actual Rows").asLong(), "3 commits of 50 changes: " + plan);
    }

    /**
     * The plan PostgreSQL runs for the window of {@code partition}'s scope {@code k:1} of table {@code t} (seqs after
     * 0, up to 1,000 of them), its change budget {@code budget}.
     */
    private static JsonNode explainWindow(String partition, long budget) throws Exception {
        String explain = pool.preparedQuery("EXPLAIN (ANALYZE, FORMAT JSON) " + storage.commitWindowStatement())
                .execute(Tuple.tuple(List.of(partition, "t", new String[] {"k:1"}, 0L, 100_000L, 1000, budget)))
                .await()
                .atMost(WAIT)
                .iterator()
                .next()
                .getValue(0)
                .toString();
        return new ObjectMapper().readTree(explain).get(0).get("Plan");
    }

    private static void collect(JsonNode node, List<JsonNode> out) {
        out.add(node);
        for (JsonNode child : node.path("Plans")) {
            collect(child, out);
        }
    }
}
