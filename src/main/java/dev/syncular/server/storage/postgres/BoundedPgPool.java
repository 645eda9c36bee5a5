package dev.syncular.server.storage.postgres;

import dev.syncular.server.storage.StorageConfig;
import io.quarkus.arc.ClientProxy;
import io.quarkus.reactive.pg.client.PgPoolCreator;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.PgPool;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.util.ArrayList;
import java.util.List;
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
 *
 * <p>A datasource URL that lists several hosts names the write endpoint of a failover pair ({@link ReadWriteTarget},
 * libpq's {@code target_session_attrs=read-write}): each new pooled connection goes to the host that accepts writes
 * now, never round-robin over a primary and its standbys.
 *
 * <p>It also keeps the connection options Quarkus built from {@code quarkus.datasource.*} (hosts, credentials,
 * TLS, every property), so that connections outside the pool — the realtime {@code LISTEN} connection — reach the
 * same database the same way ({@link #listenOptions}) instead of re-reading the URL.
 */
@Singleton
public class BoundedPgPool implements PgPoolCreator {
    private final StorageConfig config;
    private final Instance<Pool> pool;
    private volatile List<PgConnectOptions> connectOptions = List.of();

    @Inject
    public BoundedPgPool(StorageConfig config, Instance<Pool> pool) {
        this.config = config;
        this.pool = pool;
    }

    /**
     * Copies of the options the application's pool connects with, one per configured host in their order, each
     * with {@code application_name} set to {@code applicationName} (without the pool's {@code statement_timeout}:
     * a {@code LISTEN} connection idles by design). Creates the pool first when nothing has used it yet.
     */
    public List<PgConnectOptions> listenOptions(String applicationName) {
        if (connectOptions.isEmpty()) {
            ClientProxy.unwrap(pool.get()); // the pool bean is created lazily, through create() below
        }
        List<PgConnectOptions> out = new ArrayList<>();
        for (PgConnectOptions o : connectOptions) {
            out.add(new PgConnectOptions(o).addProperty("application_name", applicationName));
        }
        if (out.isEmpty()) {
            throw new IllegalStateException("the datasource pool was not created through BoundedPgPool");
        }
        return out;
    }

    @Override
    @SuppressWarnings("deprecation") // Quarkus expects a PgPool here (it casts the result)
    public Pool create(Input input) {
        StorageConfig s = config;
        PoolOptions options = new PoolOptions(input.poolOptions())
                .setMaxWaitQueueSize(s.poolMaxWaiters())
                .setConnectionTimeout((int) Math.max(1, s.poolWaitTimeout().toMillis()))
                .setConnectionTimeoutUnit(TimeUnit.MILLISECONDS);
        List<PgConnectOptions> copies = new ArrayList<>();
        input.pgConnectOptionsList().forEach(o -> copies.add(new PgConnectOptions(o)));
        connectOptions = List.copyOf(copies);
        long statementTimeoutMs = s.statementTimeout().toMillis();
        if (statementTimeoutMs > 0) {
            // a startup parameter: the session default of every pooled connection (pushes also SET LOCAL it)
            input.pgConnectOptionsList()
                    .forEach(o -> o.addProperty("statement_timeout", Long.toString(statementTimeoutMs)));
        }
        List<PgConnectOptions> hosts = input.pgConnectOptionsList();
        if (hosts.size() == 1) {
            return PgPool.pool(input.vertx(), hosts, options);
        }
        // a host list is a failover pair: every new connection goes to the host that accepts writes now
        ReadWriteTarget target = new ReadWriteTarget(input.vertx(), hosts);
        return PgPool.pool(input.vertx(), target::writable, options);
    }
}
