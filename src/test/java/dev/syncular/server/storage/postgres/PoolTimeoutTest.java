package dev.syncular.server.storage.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.syncular.server.storage.StorageException;
import dev.syncular.server.testsupport.TestPostgres;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.pgclient.PgBuilder;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.PoolOptions;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A wait for a pooled connection that runs out of time is a retryable {@code busy} (reason
 * {@code pool_wait_timeout}), recognised without naming an internal Vert.x type: a real pool of one connection on
 * the test database, the connection held, a second one asked for with a 2 s connection timeout.
 */
class PoolTimeoutTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void aTimedOutWaitForAConnectionIsBusy() {
        Vertx vertx = Vertx.vertx();
        PgConnectOptions options = PgConnectOptions.fromUri(TestPostgres.url())
                .setUser(TestPostgres.user())
                .setPassword(TestPostgres.password());
        Pool pool = PgBuilder.pool()
                .with(new PoolOptions()
                        .setMaxSize(1)
                        .setConnectionTimeout(2)
                        .setConnectionTimeoutUnit(TimeUnit.SECONDS))
                .connectingTo(options)
                .using(vertx)
                .build();
        try {
            SqlConnection held = pool.getConnection().await().atMost(WAIT);
            Throwable failure = pool.getConnection()
                    .onItem()
                    .transform(c -> (Throwable) null)
                    .onFailure()
                    .recoverWithItem(t -> t)
                    .await()
                    .atMost(WAIT);
            assertNotNull(failure, "the second connection was handed out although the pool holds one");
            StorageException busy = PgSql.busy(failure);
            assertNotNull(busy, "not recognised as busy: " + failure);
            assertEquals(StorageException.BUSY, busy.code());
            assertEquals("pool_wait_timeout", busy.details().get("reason"));
            held.close().await().atMost(WAIT);
            assertNull(PgSql.busy(new IllegalStateException("Timeout")), "only the pool's own failure is busy");
        } finally {
            pool.close().await().atMost(WAIT);
            vertx.close().await().atMost(WAIT);
        }
    }
}
