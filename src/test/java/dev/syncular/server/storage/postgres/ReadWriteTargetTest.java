package dev.syncular.server.storage.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.testsupport.TestPostgres;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgConnectOptions;
import java.net.ServerSocket;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A database host list is the write endpoint of a failover pair (issue 44, hole 3): whatever the order, a new
 * connection goes to the host whose {@code transaction_read_only} is off — the primary, never its streaming hot
 * standby — and a host that is down is passed over. Real PostgreSQL: the test database and its standby.
 */
class ReadWriteTargetTest {
    private static Vertx vertx;
    private static PgConnectOptions primary;
    private static PgConnectOptions standby;

    @BeforeAll
    static void start() {
        vertx = Vertx.vertx();
        primary = options(TestPostgres.url());
        standby = options(TestPostgres.replicaUrl());
    }

    @AfterAll
    static void stop() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    static PgConnectOptions options(String url) {
        return PgConnectOptions.fromUri(url).setUser(TestPostgres.user()).setPassword(TestPostgres.password());
    }

    static int index(ReadWriteTarget target) throws Exception {
        return target.writableIndex().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    @Test
    void theStandbyIsPassedOverWhateverTheOrder() throws Exception {
        assertEquals(1, index(new ReadWriteTarget(vertx, List.of(standby, primary))));
        assertEquals(0, index(new ReadWriteTarget(vertx, List.of(primary, standby))));
        ReadWriteTarget target = new ReadWriteTarget(vertx, List.of(standby, standby, primary));
        for (int i = 0; i < 5; i++) {
            assertEquals(2, index(target), "every connection, not only the first");
        }
    }

    @Test
    void aHostThatIsDownIsPassedOver() throws Exception {
        PgConnectOptions down = new PgConnectOptions(primary).setPort(closedPort());
        assertEquals(1, index(new ReadWriteTarget(vertx, List.of(down, primary))));
    }

    @Test
    void noHostAcceptingWritesFailsNamingEachHost() throws Exception {
        PgConnectOptions down = new PgConnectOptions(primary).setPort(closedPort());
        ExecutionException e =
                assertThrows(ExecutionException.class, () -> index(new ReadWriteTarget(vertx, List.of(standby, down))));
        ReadWriteTarget.NoWritableHostException none =
                assertInstanceOf(ReadWriteTarget.NoWritableHostException.class, e.getCause());
        assertTrue(none.getMessage().contains(standby.getPort() + " is read-only"), none.getMessage());
        assertTrue(none.getMessage().contains(down.getPort() + " is unreachable"), none.getMessage());
    }

    @Test
    void oneHostIsTakenAsItIsWithoutAProbe() throws Exception {
        PgConnectOptions down = new PgConnectOptions(primary).setPort(closedPort());
        assertEquals(0, index(new ReadWriteTarget(vertx, List.of(down))), "a single host is not probed");
    }

    private static int closedPort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
