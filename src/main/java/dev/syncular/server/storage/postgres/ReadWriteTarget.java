package dev.syncular.server.storage.postgres;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.PgConnection;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What a database host list means, for the connection pool and the realtime {@code LISTEN} connection alike: the
 * write endpoint of a failover pair (a primary and its standbys, in any order), as libpq's
 * {@code target_session_attrs=read-write} and pg_auto_failover's connection strings mean it. Each new connection
 * goes to the first host, from the one that accepted writes last time on, whose {@code transaction_read_only} is
 * {@code off}; a host that is down or read-only (a hot standby, a demoted primary) is passed over. With one host
 * nothing is probed: its options are used as they are.
 *
 * <p>The probe is a connection of its own, closed at once ({@code SHOW transaction_read_only}, one round trip),
 * made before each new connection of a multi-host list: pooled connections live long, so it costs little, and a
 * failover is followed by the next connection made after it (the old primary's connections end with it).
 */
public final class ReadWriteTarget {
    private final Vertx vertx;
    private final List<PgConnectOptions> hosts;
    private final AtomicInteger lastWritable = new AtomicInteger();

    /** @param hosts the connection options of each host, in the configured order (at least one) */
    public ReadWriteTarget(Vertx vertx, List<PgConnectOptions> hosts) {
        if (hosts.isEmpty()) {
            throw new IllegalArgumentException("no database host");
        }
        this.vertx = vertx;
        this.hosts = List.copyOf(hosts);
    }

    /** The configured hosts, in order. */
    public List<PgConnectOptions> hosts() {
        return hosts;
    }

    /**
     * The index in {@link #hosts} of a host that accepts writes now; fails, naming each host and why it was passed
     * over (unreachable, read-only), when none does.
     */
    public Future<Integer> writableIndex() {
        if (hosts.size() == 1) {
            return Future.succeededFuture(0);
        }
        return probe(lastWritable.get(), 0, new ArrayList<>());
    }

    /** The options of a host that accepts writes now ({@link #writableIndex}). */
    public Future<PgConnectOptions> writable() {
        return writableIndex().map(hosts::get);
    }

    private Future<Integer> probe(int index, int tried, List<String> passedOver) {
        if (tried == hosts.size()) {
            return Future.failedFuture(new NoWritableHostException(passedOver));
        }
        PgConnectOptions host = hosts.get(index);
        return PgConnection.connect(vertx, host)
                .compose(conn -> conn.query("SHOW transaction_read_only")
                        .execute()
                        .map(rs -> "off".equals(rs.iterator().next().getString(0)))
                        .eventually(v -> conn.close()))
                .transform(probed -> {
                    if (probed.succeeded() && probed.result()) {
                        lastWritable.set(index);
                        return Future.succeededFuture(index);
                    }
                    passedOver.add(host.getHost() + ":" + host.getPort()
                            + (probed.succeeded() ? " is read-only" : " is unreachable (" + probed.cause() + ")"));
                    return probe((index + 1) % hosts.size(), tried + 1, passedOver);
                });
    }

    /** None of the hosts of a list accepts writes now (all down, or all standbys: a failover in progress). */
    public static final class NoWritableHostException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        NoWritableHostException(List<String> passedOver) {
            super("no database host accepts writes (target_session_attrs=read-write): "
                    + String.join("; ", passedOver));
        }
    }
}
