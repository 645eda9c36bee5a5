package dev.syncular.server.boot;

import dev.syncular.server.observability.ReplicaMetrics;
import dev.syncular.server.storage.QueryReads;
import dev.syncular.server.storage.ReadReplicas;
import dev.syncular.server.storage.StorageConfig;
import dev.syncular.server.storage.postgres.BoundedPgPool;
import dev.syncular.server.storage.postgres.PostgresQueryReads;
import dev.syncular.server.storage.postgres.PostgresReadReplicas;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import io.vertx.core.Vertx;
import io.vertx.mutiny.pgclient.PgBuilder;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.PoolOptions;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The pod's read replicas ({@code syncular.storage.replicas}; docs/SCALING.md, "Reads from replicas"): a pool per
 * hot standby, connecting like the datasource (its user and password unless the URL gives its own, the same
 * {@code statement_timeout}, the same bounded wait for a connection), checked every
 * {@code syncular.storage.replica-check-interval}. None configured: {@link ReadReplicas#NONE}.
 */
@ApplicationScoped
public class ReplicaProducer {

    @Produces
    @Singleton
    ReadReplicas replicas(
            PostgresSyncStorage storage,
            Pool pool,
            BoundedPgPool datasource,
            Vertx vertx,
            StorageConfig config,
            ReplicaMetrics metrics) {
        StorageConfig s = config;
        List<String> urls = s.replicas().orElse(List.of()).stream()
                .map(String::trim)
                .filter(u -> !u.isEmpty())
                .toList();
        if (urls.isEmpty()) {
            return ReadReplicas.NONE;
        }
        PgConnectOptions primary =
                datasource.listenOptions("syncular-replica-reads").get(0);
        List<PostgresReadReplicas.Replica> replicas = new ArrayList<>();
        for (String url : urls) {
            PgConnectOptions o = PgConnectOptions.fromUri(url);
            if (URI.create(url).getRawUserInfo() == null) {
                o.setUser(primary.getUser()).setPassword(primary.getPassword());
            }
            o.addProperty("application_name", "syncular-replica-reads");
            if (s.statementTimeout().toMillis() > 0) {
                o.addProperty(
                        "statement_timeout", Long.toString(s.statementTimeout().toMillis()));
            }
            PoolOptions options = new PoolOptions()
                    .setMaxSize(s.replicaPoolMaxSize())
                    .setMaxWaitQueueSize(s.poolMaxWaiters())
                    .setConnectionTimeout((int) Math.max(1, s.poolWaitTimeout().toMillis()))
                    .setConnectionTimeoutUnit(TimeUnit.MILLISECONDS);
            Pool replica = PgBuilder.pool()
                    .with(options)
                    .connectingTo(o)
                    .using(io.vertx.mutiny.core.Vertx.newInstance(vertx))
                    .build();
            replicas.add(new PostgresReadReplicas.Replica(name(o), replica));
        }
        PostgresReadReplicas built = new PostgresReadReplicas(
                storage, pool, replicas, s.replicaMaxLag(), System::currentTimeMillis, metrics);
        built.start(vertx, s.replicaCheckInterval());
        return built;
    }

    void close(@Disposes ReadReplicas replicas) {
        if (replicas instanceof PostgresReadReplicas r) {
            r.close().await().atMost(Duration.ofSeconds(10));
        }
    }

    /** {@code host:port/db}: a replica's metrics tag and log name, never its password. */
    static String name(PgConnectOptions o) {
        return o.getHost() + ":" + o.getPort() + "/" + o.getDatabase();
    }

    /**
     * The remote operations' reads (REMOTE.md §2, §6) on the storage's database: a registered query's snapshot on
     * the primary or, with replicas configured, on one that has replayed far enough; the tables of notified commits.
     */
    @Produces
    @Singleton
    QueryReads queryReads(Pool pool, PostgresSyncStorage storage, ReadReplicas replicas, StorageConfig config) {
        return new PostgresQueryReads(pool, storage, replicas, config.statementTimeout());
    }
}
