package dev.syncular.server.storage.postgres;

import dev.syncular.server.storage.SignalListener;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.pubsub.PgSubscriber;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * {@link SignalListener} on PostgreSQL: one {@link PgSubscriber} {@code LISTEN} connection at a time, on the host
 * that accepts writes when there are several ({@link ReadWriteTarget}), that reconnects forever. With one host it
 * reconnects by itself after {@link #RECONNECT_DELAY_MS}; with a host list (the write endpoint of a failover pair, as
 * for the pool) every lost connection goes back to finding the host that accepts writes, since a failover moves the
 * primary and a standby refuses {@code LISTEN}. A failed connect (the first one too) is retried with a backoff
 * ({@link #reconnectDelayMs}).
 */
public final class PostgresSignalListener implements SignalListener {
    private static final long RECONNECT_DELAY_MS = 500;
    private static final long MAX_RECONNECT_DELAY_MS = 10_000;

    private final Vertx vertx;
    /** One per database host, in the datasource's order. */
    private final List<PgConnectOptions> hosts;

    /**
     * @param hosts the connection options of each database host, in the datasource's order (the options the
     *              application's pool connects with, {@link BoundedPgPool#listenOptions}); at least one
     */
    public PostgresSignalListener(Vertx vertx, List<PgConnectOptions> hosts) {
        if (hosts.isEmpty()) {
            throw new IllegalArgumentException("a realtime hub needs the connection options of one database host");
        }
        this.vertx = vertx;
        this.hosts = List.copyOf(hosts);
    }

    @Override
    public Listening listen(List<Channel> channels, Owner owner) {
        Connection c = new Connection(List.copyOf(channels), owner, new ReadWriteTarget(vertx, hosts));
        c.listen(0);
        return c;
    }

    /** The delay before the next connect after {@code failedConnects} failed in a row (0 after a lost connection). */
    public static long reconnectDelayMs(int failedConnects) {
        int doublings = Math.min(Math.max(failedConnects - 1, 0), 5);
        return Math.min(RECONNECT_DELAY_MS << doublings, MAX_RECONNECT_DELAY_MS);
    }

    private final class Connection implements Listening {
        private final List<Channel> channels;
        private final Owner owner;
        /** The LISTEN connection's host: the only one, or the one of a list that accepts writes now. */
        private final ReadWriteTarget target;

        private volatile PgSubscriber subscriber;

        Connection(List<Channel> channels, Owner owner, ReadWriteTarget target) {
            this.channels = channels;
            this.owner = owner;
            this.target = target;
        }

        @Override
        public void close() {
            PgSubscriber s = subscriber;
            if (s != null) {
                s.close();
            }
        }

        /** Opens a subscriber on the host that accepts writes; a failed search is retried with a backoff. */
        void listen(int failedConnects) {
            if (owner.draining()) {
                return;
            }
            target.writableIndex().onComplete(found -> {
                if (found.succeeded()) {
                    subscribe(found.result(), failedConnects);
                } else {
                    owner.failed(found.cause());
                    vertx.setTimer(reconnectDelayMs(failedConnects + 1), t -> listen(failedConnects + 1));
                }
            });
        }

        /** A subscriber on host {@code host} of {@link #hosts} ({@link #listen}). */
        private void subscribe(int host, int failedConnects) {
            if (owner.draining()) {
                return;
            }
            boolean failover = hosts.size() > 1;
            PgSubscriber next = PgSubscriber.subscriber(vertx, hosts.get(host));
            AtomicBoolean connected = new AtomicBoolean(); // this subscriber's first LISTEN took effect once
            subscriber = next;
            if (owner.draining()) { // drain began meanwhile and may have closed the previous subscriber only
                next.close();
                return;
            }
            next.reconnectPolicy(retries -> failover ? -1L : RECONNECT_DELAY_MS);
            for (int i = 0; i < channels.size(); i++) {
                Channel ch = channels.get(i);
                boolean first = i == 0;
                next.channel(ch.name()).handler(ch.handler()::accept).subscribeHandler(v -> {
                    ch.listened().run();
                    if (first) {
                        connected.set(true);
                    }
                });
            }
            AtomicBoolean moved = new AtomicBoolean();
            if (failover) {
                // a lost connection: find the host that accepts writes again
                next.closeHandler(v -> retry(next, moved, connected.get() ? 0 : failedConnects + 1));
            }
            next.connect().onFailure(e -> {
                owner.failed(e);
                // the subscriber's reconnect policy covers only a connection that was once up: a failed connect is
                // retried here until it listens — readiness waits for it, and nothing else would bring the pod
                // back into rotation
                retry(next, moved, failedConnects + 1);
            });
        }

        /**
         * Once per failed subscriber (its close and its failed connect may both report): {@link #listen} again after
         * a delay that doubles with each connect failed in a row, from {@link #RECONNECT_DELAY_MS} to {@link
         * #MAX_RECONNECT_DELAY_MS}.
         */
        private void retry(PgSubscriber failed, AtomicBoolean moved, int failedConnects) {
            if (owner.draining() || !moved.compareAndSet(false, true)) {
                return;
            }
            failed.close();
            vertx.setTimer(reconnectDelayMs(failedConnects), t -> listen(failedConnects));
        }
    }
}
