package dev.syncular.server.storage.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.storage.ChangeToWrite;
import dev.syncular.server.storage.ReadRoute;
import dev.syncular.server.storage.ReplicaObserver;
import dev.syncular.server.storage.StoredCommit;
import dev.syncular.server.storage.SyncStorageContract;
import dev.syncular.server.testsupport.TestPostgres;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.Tuple;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The replica tests' standby is real (docs/SCALING.md, "Reads from replicas"): a hot standby made with
 * {@code pg_basebackup} that streams from the test database's cluster ({@code .ci/standby.sh}). A row inserted on the
 * primary appears on the standby (polled with a deadline), and the standby refuses writes.
 */
class StandbyStreamingTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String SCHEMA = "standby_streaming_test";
    private static Vertx vertx;
    private static Pool primary;
    private static Pool standby;

    @BeforeAll
    static void pools() {
        vertx = Vertx.vertx();
        primary = TestPostgres.pool(vertx, 2);
        standby = TestPostgres.replicaPool(vertx, 2);
        primary.query("CREATE SCHEMA IF NOT EXISTS " + SCHEMA).execute().await().atMost(WAIT);
        primary.query("CREATE TABLE IF NOT EXISTS " + SCHEMA + ".marks (id text PRIMARY KEY)")
                .execute()
                .await()
                .atMost(WAIT);
    }

    @AfterAll
    static void close() {
        primary.query("DROP SCHEMA IF EXISTS " + SCHEMA + " CASCADE")
                .execute()
                .await()
                .atMost(WAIT);
        primary.close().await().atMost(WAIT);
        standby.close().await().atMost(WAIT);
        vertx.close().await().atMost(WAIT);
    }

    /**
     * docs/SCALING.md "Reads from replicas": the announced sequences are bounded in bytes, and forgetting them past
     * the budget never lets a replica serve a state older than a commit this pod heard announced — the fence holds a
     * paused standby back until it has replayed past the forgotten commits.
     */
    @Test
    void announcedSequencesPastTheirBudgetAreForgottenBehindAFence() {
        String pgSchema = "standby_announced_"
                + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        PostgresSyncStorage storage = new PostgresSyncStorage(primary, pgSchema, PostgresSyncStorage.Settings.DEFAULTS);
        PostgresReadReplicas replicas = new PostgresReadReplicas(
                storage,
                primary,
                List.of(new PostgresReadReplicas.Replica("standby", standby)),
                Duration.ofHours(1),
                System::currentTimeMillis,
                ReplicaObserver.NONE);
        String p = "p-" + UUID.randomUUID();
        try {
            storage.ensureSchema(SchemaLoader.parse(SyncStorageContract.SCHEMA_JSON))
                    .await()
                    .atMost(WAIT);
            storage.touchPartition(p, 1_000L).await().atMost(WAIT);
            assertEquals(1L, append(storage, p));
            assertEquals(1L, servedByTheStandby(replicas, p, 1).upToSeq());
            try {
                TestPostgres.pauseReplay(standby);
                assertEquals(2L, append(storage, p));
                replicas.announced(p, 2);
                assertFalse(route(replicas, p).onReplica(), "the paused standby lacks the announced commit");

                long peak = 0;
                for (int i = 0; replicas.announcedBytes() >= peak; i++) {
                    peak = replicas.announcedBytes();
                    replicas.announced("other-" + i, 1);
                    assertTrue(replicas.announcedBytes() <= PostgresReadReplicas.ANNOUNCED_BUDGET_BYTES);
                }
                assertTrue(
                        peak > PostgresReadReplicas.ANNOUNCED_BUDGET_BYTES - 1024,
                        "forgotten only at the budget: " + peak);
                replicas.check().await().atMost(WAIT);
                assertFalse(
                        route(replicas, p).onReplica(),
                        "the announced commit was forgotten: the fence holds the paused standby back");
            } finally {
                TestPostgres.resumeReplay(standby);
            }
            assertEquals(2L, servedByTheStandby(replicas, p, 2).upToSeq(), "served again once replayed");
        } finally {
            primary.query("DROP SCHEMA IF EXISTS " + pgSchema + " CASCADE")
                    .execute()
                    .await()
                    .atMost(WAIT);
        }
    }

    private static long append(PostgresSyncStorage storage, String partition) {
        return storage.inPartitionTransaction(
                        partition,
                        tx -> tx.appendCommit(
                                "actor-1",
                                "client-1",
                                UUID.randomUUID().toString(),
                                5_000L,
                                List.of(ChangeToWrite.upsert(
                                        "notes", "1", 1, Map.of("project_id", "P1"), new Object[] {1L, "P1", "body"})),
                                StoredCommit.UNTRACED))
                .await()
                .atMost(WAIT);
    }

    private static ReadRoute route(PostgresReadReplicas replicas, String partition) {
        return replicas.route(partition, 0).await().atMost(WAIT);
    }

    /** Checks and routes until the standby serves the partition through {@code seq} (polled with a deadline). */
    private static ReadRoute servedByTheStandby(PostgresReadReplicas replicas, String partition, long seq) {
        ReadRoute[] last = {null};
        until("the standby serves " + partition + " through " + seq, () -> {
            replicas.check().await().atMost(WAIT);
            last[0] = route(replicas, partition);
            return last[0].onReplica() && last[0].upToSeq() >= seq;
        });
        return last[0];
    }

    private static void until(String what, java.util.function.BooleanSupplier done) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!done.getAsBoolean()) { // each poll is a round trip to PostgreSQL
            if (System.nanoTime() > deadline) {
                throw new AssertionError(what + ": not within " + WAIT);
            }
        }
    }

    @Test
    void aRowCommittedOnThePrimaryAppearsOnTheStandby() {
        Row recovery = standby.query("SELECT pg_is_in_recovery()")
                .execute()
                .await()
                .atMost(WAIT)
                .iterator()
                .next();
        assertTrue(recovery.getBoolean(0), "the replica URL is not a standby");
        String id = UUID.randomUUID().toString();
        primary.preparedQuery("INSERT INTO " + SCHEMA + ".marks (id) VALUES ($1)")
                .execute(Tuple.of(id))
                .await()
                .atMost(WAIT);
        long deadline = System.nanoTime() + WAIT.toNanos();
        int seen = 0;
        while (System.nanoTime() < deadline) { // each poll is a round trip to the standby

            RowSet<Row> rs = standby.query("SELECT count(*) FROM pg_namespace n WHERE n.nspname = '" + SCHEMA + "'"
                            + " AND to_regclass('" + SCHEMA + ".marks') IS NOT NULL")
                    .execute()
                    .await()
                    .atMost(WAIT);
            if (rs.iterator().next().getLong(0) == 1L) {
                seen = standby.preparedQuery("SELECT count(*) FROM " + SCHEMA + ".marks WHERE id = $1")
                        .execute(Tuple.of(id))
                        .await()
                        .atMost(WAIT)
                        .iterator()
                        .next()
                        .getInteger(0);
                if (seen == 1) {
                    break;
                }
            }
        }
        assertEquals(1, seen, "the row never reached the standby within " + WAIT);
        Throwable refused = standby.preparedQuery("INSERT INTO " + SCHEMA + ".marks (id) VALUES ($1)")
                .execute(Tuple.of("x" + id))
                .onItem()
                .transform(r -> (Throwable) null)
                .onFailure()
                .recoverWithItem(t -> t)
                .await()
                .atMost(WAIT);
        assertTrue(
                refused != null && refused.getMessage().contains("read-only"),
                "the standby accepted a write: " + refused);
    }
}
