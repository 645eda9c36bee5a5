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
 * without limit while the database is slow. Every connection also starts with PostgreSQL's
 * {@code statement_timeout} set to {@code syncular.storage.statement-timeout}, so no statement of a request — a
 * pull's commit window as much as a push — can hold a pooled connection longer; one cut off is answered 429
 * {@code sync.rate_limited} ({@code details.reason} {@code statement_timeout}). Work that may legitimately run
 * longer (start-up DDL) lifts it with {@code SET LOCAL}. (Pool creation through this bean does not use a
 * Quarkus credentials provider; the server configures none.)
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
        long statementTimeoutMs = s.statementTimeout().toMillis();
        if (statementTimeoutMs > 0) {
            // a startup parameter: the session default of every pooled connection (pushes also SET LOCAL it)
            input.pgConnectOptionsList().forEach(o -> o.addProperty("statement_timeout",
                    Long.toString(statementTimeoutMs)));
        }
        return PgPool.pool(input.vertx(), input.pgConnectOptionsList(), options);
    }
}
