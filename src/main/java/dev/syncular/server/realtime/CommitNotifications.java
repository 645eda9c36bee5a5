package dev.syncular.server.realtime;

import dev.syncular.server.storage.RealtimeSignals;
import dev.syncular.server.storage.postgres.ReadWriteTarget;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.pubsub.PgSubscriber;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.jboss.logging.Logger;

/**
 * The hub's one PostgreSQL {@code LISTEN} connection, on which this pod hears the post-commit notifications of
 * every pod (§8.2: {@code <partition>:<commitSeq>}, or an epoch rotation, §2.1) on the storage's commit channel,
 * operator disconnects on its control channel ({@link OperatorDisconnects}) and, with presence on, the other pods'
 * presence ({@link PresenceRelay}). A {@link PgSubscriber} that reconnects forever, on the host that accepts writes
 * when there are several ({@link ReadWriteTarget}). Every re-{@code LISTEN} after the first wakes all local sockets
 * with {@code catchup-required} (§8.3, §8.4 catch-up), spread in time, since notifications in between are lost.
 *
 * <p>Each notified commit goes to the {@link RealtimeHub.CommitListener}s, then to {@link DeltaDelivery}.
 */
final class CommitNotifications {
    // the hub's log category, as before the hub was split (issue 46)
    private static final Logger LOG = Logger.getLogger(RealtimeHub.class);

    private static final long RECONNECT_DELAY_MS = 500;
    private static final long MAX_RECONNECT_DELAY_MS = 10_000;
    private static final int WAKES_PER_SECOND_AFTER_RECONNECT = 2000;
    private static final long MAX_WAKE_SPREAD_MS = 5000;

    /** One per database host, in the datasource's order ({@link RealtimeHub.Settings#listen}). */
    private final List<PgConnectOptions> hosts;
    /** The LISTEN connection's host: the only one, or the one of a list that accepts writes now. */
    private final ReadWriteTarget target;

    private final Vertx vertx;
    private final RealtimeSignals signals;
    private final SessionSet sessions;
    private final DeltaDelivery delivery;
    private final PresenceRelay presence;
    private final RealtimeMetrics metrics;
    /** The hub is draining: no new subscriber, no retry. */
    private final BooleanSupplier draining;

    private final List<RealtimeHub.CommitListener> listeners = new CopyOnWriteArrayList<>();
    private final CompletableFuture<Void> commitsHeard = new CompletableFuture<>();
    private volatile PgSubscriber subscriber;
    private volatile boolean listening;

    /** The LISTEN connection to the hosts of {@link RealtimeHub.Settings#listen} of {@code settings}. */
    CommitNotifications(
            RealtimeHub.Settings settings,
            Vertx vertx,
            RealtimeSignals signals,
            SessionSet sessions,
            DeltaDelivery delivery,
            PresenceRelay presence,
            RealtimeMetrics metrics,
            BooleanSupplier draining) {
        this.hosts = settings.listen();
        this.target = new ReadWriteTarget(vertx, hosts);
        this.vertx = vertx;
        this.signals = signals;
        this.sessions = sessions;
        this.delivery = delivery;
        this.presence = presence;
        this.metrics = metrics;
        this.draining = draining;
    }

    /** Adds a listener of the commit channel ({@link RealtimeHub.CommitListener}). */
    void addListener(RealtimeHub.CommitListener listener) {
        listeners.add(listener);
    }

    /** Opens the LISTEN connection; the returned future completes once the commit channel's LISTEN took effect. */
    CompletableFuture<Void> start() {
        listen(0);
        return commitsHeard;
    }

    /** Whether the LISTEN connection is (or was once) established: readiness waits for it. */
    boolean listening() {
        return listening;
    }

    /** Whether a subscriber was ever opened (then {@link #close} releases it). */
    boolean subscribed() {
        return subscriber != null;
    }

    /** Releases the LISTEN connection (at drain; no reconnect follows while the hub drains). */
    void close() {
        subscriber.close();
    }

    /**
     * Opens a subscriber for the commit, control and presence channels. With one host it is that host's, and
     * reconnects forever by itself. With a host list ({@link ReadWriteTarget}: the write endpoint of a failover
     * pair, as for the pool) it is the host that accepts writes now, and every lost connection goes back here to
     * find it again, since a failover moves the primary and a standby refuses {@code LISTEN}; its first
     * {@code LISTEN} then counts as a re-{@code LISTEN}, since notifications in between were lost. A failed
     * connect (the first one too) is retried, with backoff ({@link #reconnectDelayMs}).
     */
    private void listen(int failedConnects) {
        if (draining.getAsBoolean()) {
            return;
        }
        target.writableIndex().onComplete(found -> {
            if (found.succeeded()) {
                subscribe(found.result(), failedConnects);
            } else {
                metrics.failures().failed(RealtimeFailures.Kind.LISTEN, found.cause());
                vertx.setTimer(reconnectDelayMs(failedConnects + 1), t -> listen(failedConnects + 1));
            }
        });
    }

    /** A subscriber on host {@code host} of {@link #hosts} ({@link #listen}). */
    private void subscribe(int host, int failedConnects) {
        if (draining.getAsBoolean()) {
            return;
        }
        boolean failover = hosts.size() > 1;
        PgSubscriber next = PgSubscriber.subscriber(vertx, hosts.get(host));
        AtomicBoolean connected = new AtomicBoolean(); // this subscriber's LISTEN took effect once
        subscriber = next;
        if (draining.getAsBoolean()) { // drain began meanwhile and may have closed the previous subscriber only
            next.close();
            return;
        }
        next.reconnectPolicy(retries -> failover ? -1L : RECONNECT_DELAY_MS);
        next.channel(signals.notificationChannel()).handler(this::notified).subscribeHandler(v -> {
            if (listening) {
                // a re-LISTEN: whatever was committed while the connection was down was never announced here
                metrics.listenReconnect();
                wakeAllSpread();
                toListeners(RealtimeHub.CommitListener::notificationsLost);
            }
            listening = true;
            connected.set(true);
            commitsHeard.complete(null);
        });
        // operator disconnects of an actor's or a client's sockets, announced by whichever pod took the admin request
        next.channel(signals.controlChannel())
                .handler(payload -> OperatorDisconnects.received(payload, sessions::of, metrics.failures()));
        if (presence.enabled()) {
            next.channel(presence.channel()).handler(presence::received).subscribeHandler(v -> presence.listened());
        }
        AtomicBoolean moved = new AtomicBoolean();
        if (failover) {
            // a lost connection: find the host that accepts writes again
            next.closeHandler(v -> retry(next, moved, connected.get() ? 0 : failedConnects + 1));
        }
        next.connect().onFailure(e -> {
            metrics.failures().failed(RealtimeFailures.Kind.LISTEN, e);
            // the subscriber's reconnect policy covers only a connection that was once up: a failed connect is
            // retried here until the hub listens — readiness waits for it, and nothing else would bring the pod
            // back into rotation
            retry(next, moved, failedConnects + 1);
        });
    }

    /**
     * Once per failed subscriber (its close and its failed connect may both report): {@link #listen} again after a
     * delay that doubles with each connect failed in a row, from {@link #RECONNECT_DELAY_MS} to {@link
     * #MAX_RECONNECT_DELAY_MS}.
     */
    private void retry(PgSubscriber failed, AtomicBoolean moved, int failedConnects) {
        if (draining.getAsBoolean() || !moved.compareAndSet(false, true)) {
            return;
        }
        failed.close();
        vertx.setTimer(reconnectDelayMs(failedConnects), t -> listen(failedConnects));
    }

    /** The delay before the next connect after {@code failedConnects} failed in a row (0 after a lost connection). */
    static long reconnectDelayMs(int failedConnects) {
        int doublings = Math.min(Math.max(failedConnects - 1, 0), 5);
        return Math.min(RECONNECT_DELAY_MS << doublings, MAX_RECONNECT_DELAY_MS);
    }

    /** A commit notification {@code <partition>:<commitSeq>}: fanned out in notification order per partition. */
    private void notified(String payload) {
        int colon = payload.lastIndexOf(':');
        if (colon < 0) {
            return;
        }
        String partition = payload.substring(0, colon);
        if (RealtimeSignals.EPOCH_NOTIFICATION.equals(payload.substring(colon + 1))) {
            delivery.epochRotated(partition);
            toListeners(l -> l.partitionReset(partition));
            return;
        }
        long seq;
        try {
            seq = Long.parseLong(payload.substring(colon + 1));
        } catch (NumberFormatException e) {
            return;
        }
        toListeners(l -> l.committed(partition, seq));
        delivery.committed(partition, seq);
    }

    private void toListeners(Consumer<RealtimeHub.CommitListener> call) {
        for (RealtimeHub.CommitListener l : listeners) {
            try {
                call.accept(l);
            } catch (RuntimeException e) {
                LOG.warn("A commit listener failed", e);
            }
        }
    }

    /**
     * After a re-LISTEN every local socket may have missed commits: each is fenced at once (no delta until its
     * client caught up) and woken with {@code catchup-required} (§8.3) at a random instant within a spread of
     * {@value #WAKES_PER_SECOND_AFTER_RECONNECT} sockets a second (at most {@value #MAX_WAKE_SPREAD_MS} ms), so
     * a reconnect does not send every client's catch-up pull to the pod in the same instant.
     */
    private void wakeAllSpread() {
        List<Map.Entry<String, RealtimeSession>> all = new ArrayList<>();
        sessions.forEach((partition, s) -> {
            s.fence();
            all.add(Map.entry(partition, s));
        });
        long spreadMs = Math.min(MAX_WAKE_SPREAD_MS, all.size() * 1000L / WAKES_PER_SECOND_AFTER_RECONNECT);
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (var e : all) {
            long delay = spreadMs < 1 ? 0 : random.nextLong(spreadMs);
            if (delay < 1) {
                e.getValue().lostNotifications(metrics);
                continue;
            }
            vertx.setTimer(delay, t -> {
                if (sessions.of(e.getKey()).contains(e.getValue())) {
                    e.getValue().lostNotifications(metrics);
                }
            });
        }
    }
}
