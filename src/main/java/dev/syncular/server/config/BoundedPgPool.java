package dev.syncular.server.config;

import io.quarkus.reactive.pg.client.PgPoolCreator;
import io.vertx.pgclient.PgPool;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.util.concurrent.TimeUnit;

/**
 * Creates the reactive PostgreSQL pool from Quarkus's options (URL, credentials, {@code max-size}, ...) with a
 * bounded wait for a connection, which Quarkus does not configure: at most {@code syncular.storage.pool-max-waiters}
 * requests wait, for at most {@code syncular.storage.pool-wait-timeout}. Beyond either the pool fails at once,
 * and the request is answered 429 {@code sync.rate_limited} with {@code Retry-After} instead of queueing
 * without limit while the database is slow. (Pool creation through this bean does not use a Quarkus
 * credentials provider; the server configures none.)
 */
@Singleton
public class BoundedPgPool implements PgPoolCreator {
    private final SyncularConfig config;

    @Inject
    public BoundedPgPool(SyncularConfig config) {
        this.config = config;
    }

    @Override
    @SuppressWarnings("deprecation") // Quarkus expects a PgPool here (it casts the result)
    public Pool create(Input input) {
        SyncularConfig.Storage s = config.storage();
        PoolOptions options = new PoolOptions(input.poolOptions())
                .setMaxWaitQueueSize(s.poolMaxWaiters())
                .setConnectionTimeout((int) Math.max(1, s.poolWaitTimeout().toMillis()))
                .setConnectionTimeoutUnit(TimeUnit.MILLISECONDS);
        return PgPool.pool(input.vertx(), input.pgConnectOptionsList(), options);
    }
}
