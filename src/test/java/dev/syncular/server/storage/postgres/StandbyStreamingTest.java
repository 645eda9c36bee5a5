package dev.syncular.server.storage.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.testsupport.TestPostgres;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.Tuple;
import java.time.Duration;
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
