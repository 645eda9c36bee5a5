package dev.syncular.server.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.testsupport.TestPostgres;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** {@link TestPostgres} gives plain JUnit tests a reachable database, once per JVM. */
class TestPostgresTest {

    @Test
    void coordinatesReachADatabase() throws Exception {
        String url = TestPostgres.url();
        assertTrue(url.startsWith("postgresql://"), url);
        assertEquals(url, TestPostgres.url(), "stable within the JVM");

        PgConnectOptions options =
                PgConnectOptions.fromUri(url).setUser(TestPostgres.user()).setPassword(TestPostgres.password());
        Vertx vertx = Vertx.vertx();
        try {
            Pool pool = PgBuilder.pool().connectingTo(options).using(vertx).build();
            Row row = pool.query("SELECT 1 AS one, current_user AS who")
                    .execute()
                    .toCompletionStage()
                    .toCompletableFuture()
                    .get(30, TimeUnit.SECONDS)
                    .iterator()
                    .next();
            assertEquals(1, row.getInteger("one"));
            assertEquals(TestPostgres.user(), row.getString("who"));
            pool.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }
}
