package dev.syncular.server.storage.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.syncular.server.storage.TenantLoadRow;
import dev.syncular.server.testsupport.ScratchSchemas;
import dev.syncular.server.testsupport.TestPostgres;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The loudest tenants merged across pods ({@code sync_tenant_load}) on the real test PostgreSQL: two storages on two
 * connection pools — two pods — publish their own top partitions; a reader on either sums them per partition (every
 * figure and each refusal reason), a pod's next publication replaces its rows, and the rows of a pod not heard from
 * since the reader's horizon count no more and are deleted by the next publication of any pod.
 */
class TenantLoadTableTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static Vertx vertx;
    private static Pool podA;
    private static Pool podB;
    private static String schema;
    private static PostgresSyncStorage a;
    private static PostgresSyncStorage b;

    @BeforeAll
    static void start() {
        vertx = Vertx.vertx();
        podA = TestPostgres.pool(vertx, 2);
        podB = TestPostgres.pool(vertx, 2);
        schema = "sync_tenants_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        a = new PostgresSyncStorage(podA, schema, PostgresSyncStorage.Settings.DEFAULTS);
        b = new PostgresSyncStorage(podB, schema, PostgresSyncStorage.Settings.DEFAULTS);
        a.ensureSchema(ScratchSchemas.ONE_TABLE).await().atMost(WAIT);
    }

    @AfterAll
    static void stop() {
        podA.query("DROP SCHEMA IF EXISTS \"" + schema + "\" CASCADE")
                .execute()
                .await()
                .atMost(WAIT);
        podA.close().await().atMost(WAIT);
        podB.close().await().atMost(WAIT);
        vertx.close().await().atMost(WAIT);
    }

    private static TenantLoadRow row(
            String partition, long db, long committed, long fanout, Map<String, Long> refusals) {
        return new TenantLoadRow(partition, db, committed, fanout, refusals, 1);
    }

    private static Map<String, TenantLoadRow> read(PostgresSyncStorage s, long liveSinceMs) {
        return s.readTenantLoad(liveSinceMs).await().atMost(WAIT).stream()
                .collect(Collectors.toMap(TenantLoadRow::partition, Function.identity()));
    }

    @Test
    void twoPodsRowsAreSummedPerPartition() {
        long now = System.currentTimeMillis();
        a.publishTenantLoad(
                        "pod-a",
                        now,
                        now - 100_000,
                        List.of(
                                row("loud", 5_000, 40_000, 100, Map.of("actor_rounds", 2L)),
                                row("only-a", 1, 2, 3, Map.of())))
                .await()
                .atMost(WAIT);
        b.publishTenantLoad(
                        "pod-b",
                        now,
                        now - 100_000,
                        List.of(row("loud", 7_000, 2_000, 50, Map.of("actor_rounds", 1L, "queue_full", 4L))))
                .await()
                .atMost(WAIT);

        // the pods a deployment-wide push rate is shared among (issue 45): each publication counts its pod
        assertEquals(2, a.countLivePods(now - 30_000).await().atMost(WAIT));
        // a pod that stops withdraws its rows: no longer live, its figures gone; it comes back with its next
        // publication
        b.withdrawTenantLoad("pod-b").await().atMost(WAIT);
        assertEquals(1, a.countLivePods(now - 30_000).await().atMost(WAIT));
        b.publishTenantLoad(
                        "pod-b",
                        now,
                        now - 100_000,
                        List.of(row("loud", 7_000, 2_000, 50, Map.of("actor_rounds", 1L, "queue_full", 4L))))
                .await()
                .atMost(WAIT);
        assertEquals(2, a.countLivePods(now - 30_000).await().atMost(WAIT));
        for (PostgresSyncStorage reader : List.of(a, b)) {
            Map<String, TenantLoadRow> merged = read(reader, now - 30_000);
            TenantLoadRow loud = merged.get("loud");
            assertEquals(12_000, loud.databaseNanos());
            assertEquals(42_000, loud.committedBytes());
            assertEquals(150, loud.fanoutBytes());
            assertEquals(Map.of("actor_rounds", 3L, "queue_full", 4L), loud.refusals());
            assertEquals(2, loud.pods());
            TenantLoadRow onlyA = merged.get("only-a");
            assertEquals(new TenantLoadRow("only-a", 1, 2, 3, Map.of(), 1), onlyA);
        }

        // pod A's next publication replaces its rows: only-a is gone, loud is A's new figure plus B's
        a.publishTenantLoad("pod-a", now + 1, now - 100_000, List.of(row("loud", 1_000, 0, 0, Map.of())))
                .await()
                .atMost(WAIT);
        Map<String, TenantLoadRow> merged = read(b, now - 30_000);
        assertNull(merged.get("only-a"));
        assertEquals(8_000, merged.get("loud").databaseNanos());
        assertEquals(
                Map.of("actor_rounds", 1L, "queue_full", 4L), merged.get("loud").refusals());

        // pod B falls silent: past the reader's horizon its rows count no more ...
        Map<String, TenantLoadRow> later = read(a, now + 1);
        assertEquals(1_000, later.get("loud").databaseNanos());
        assertEquals(1, later.get("loud").pods());
        assertEquals(1, b.countLivePods(now + 1).await().atMost(WAIT), "pod B is no longer live");
        // ... and the next publication of any pod deletes them; a pod without load still counts as live
        a.publishTenantLoad("pod-a", now + 2, now + 1, List.of()).await().atMost(WAIT);
        assertEquals(Map.of(), read(b, 0));
        assertEquals(1, b.countLivePods(0).await().atMost(WAIT));
    }
}
