package dev.syncular.server.storage.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.storage.SnapshotRows;
import dev.syncular.server.testsupport.TestPostgres;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A snapshot page (§4.7, §5.2) bounded in bytes ({@link SnapshotRows}) is still read in the index's order and stops at
 * its LIMIT: the window that sums the rows' bytes adds no sort and no scan of the scope past the page, or every batch
 * of a large bootstrap would cost the whole scope after its cursor. Real PostgreSQL, the production DDL and statement,
 * the plan PostgreSQL runs for a fresh scope of 20,000 rows with the page's plan guard.
 */
class SnapshotPagePlanTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static Vertx vertx;
    private static Pool pool;
    private static String schema;
    private static PostgresSyncStorage storage;

    @BeforeAll
    static void start() {
        vertx = Vertx.vertx();
        pool = TestPostgres.pool(vertx, 2);
        schema = "sync_page_plan_"
                + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        storage = new PostgresSyncStorage(pool, schema, PostgresSyncStorage.Settings.DEFAULTS);
        storage.ensureSchema(SchemaLoader.parse("{\"version\":1,\"tables\":[{\"name\":\"todos\",\"primaryKey\":\"id\","
                        + "\"columns\":[{\"name\":\"id\",\"type\":\"string\",\"nullable\":false},"
                        + "{\"name\":\"list_id\",\"type\":\"string\",\"nullable\":false},"
                        + "{\"name\":\"title\",\"type\":\"string\",\"nullable\":true},"
                        + "{\"name\":\"position\",\"type\":\"integer\",\"nullable\":true}],"
                        + "\"scopes\":[\"list:{list_id}\"]}]}"))
                .await()
                .atMost(WAIT);
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

    private static void sql(String statement) {
        pool.query(statement).execute().await().atMost(WAIT);
    }

    @Test
    void aPageBoundedInBytesIsReadInIndexOrderAndStopsAtItsLimit() throws Exception {
        String s = PgSql.q(schema);
        String rows = s + "." + PgSql.q(RowTable.physicalName("todos"));
        sql("INSERT INTO " + rows + " (\"_sync_partition\", \"_sync_row_id\", \"_sync_server_version\","
                + " \"_sync_scopes\", \"_sync_column_versions\", \"id\", \"list_id\", \"title\", \"position\")"
                + " SELECT 'p', 'r' || lpad(g::text, 6, '0'), 1, '{\"list_id\":\"l0\"}'::jsonb, NULL,"
                + " 'r' || lpad(g::text, 6, '0'), 'l0', 'title ' || g, g FROM generate_series(1, 20000) g");
        sql("INSERT INTO " + s + ".sync_row_scopes (partition_id, tbl, scope_key, row_id)"
                + " SELECT 'p', 'todos', 'list:l0', 'r' || lpad(g::text, 6, '0') FROM generate_series(1, 20000) g");
        Map<String, Set<String>> scopes = Map.of("list_id", Set.of("l0"));
        // a page after a cursor prepares the statement; its rows are the next ones in byte order
        SnapshotRows page = storage.readSnapshotPage("p", "todos", scopes, "r010000", 2501, 8L << 20)
                .await()
                .atMost(WAIT);
        assertEquals(2501, page.rows().size());
        assertEquals("r010001", page.rows().get(0).rowId());
        assertFalse(page.cut());

        String[] keys = {"list:l0"};
        String explain = pool.withTransaction(conn -> conn.query("SET LOCAL enable_seqscan = off;"
                                + " SET LOCAL enable_nestloop = off; SET LOCAL enable_bitmapscan = off;"
                                + " SET LOCAL enable_sort = off; SET LOCAL max_parallel_workers_per_gather = 0")
                        .execute()
                        .chain(() -> conn.preparedQuery(
                                        "EXPLAIN (ANALYZE, FORMAT JSON) " + storage.snapshotPageStatement("todos"))
                                .execute(Tuple.tuple(List.of("p", "todos", keys, "r010000", 2501, 8L << 20)))))
                .await()
                .atMost(WAIT)
                .iterator()
                .next()
                .getValue(0)
                .toString();
        JsonNode plan = new ObjectMapper().readTree(explain).get(0).get("Plan");
        List<JsonNode> nodes = new ArrayList<>();
        collect(plan, nodes);
        assertEquals(2501L, plan.get("Actual Rows").asLong());
        for (JsonNode n : nodes) {
            assertFalse(n.path("Node Type").asText().equals("Sort"), "a sort in the page's plan: " + plan);
            if (n.path("Relation Name").asText("").equals(RowTable.physicalName("todos"))) {
                assertTrue(
                        n.path("Actual Rows").asLong() <= 2503,
                        "the scope was read past the page: " + n.path("Actual Rows") + " rows; " + plan);
            }
        }
    }

    private static void collect(JsonNode node, List<JsonNode> out) {
        out.add(node);
        for (JsonNode child : node.path("Plans")) {
            collect(child, out);
        }
    }
}
