package dev.syncular.server.realtime;

import dev.syncular.server.storage.RealtimeSignals;
import dev.syncular.server.storage.SignalListener;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.jboss.logging.Logger;

/**
 * The hub's one listening connection to the storage's signals ({@link SignalListener}: reconnects forever, on the
 * database host that accepts writes), on which this pod hears the post-commit notifications of every pod (§8.2:
 * {@code <partition>:<commitSeq>}, {@code <partition>:<first>-<last>} for a group's commits, or an epoch rotation,
 * §2.1) on the storage's commit channel, operator disconnects
 * on its control channel ({@link OperatorDisconnects}) and, with presence on, the other pods' presence
 * ({@link PresenceRelay}). Every re-{@code LISTEN} after the first wakes all local sockets with
 * {@code catchup-required} (§8.3, §8.4 catch-up), spread in time, since notifications in between are lost.
 *
 * <p>Each notified commit goes to the {@link RealtimeHub.CommitListener}s, then to {@link DeltaDelivery}.
 */
final class CommitNotifications {
    // the hub's log category, as before the hub was split (issue 46)
    private static final Logger LOG = Logger.getLogger(RealtimeHub.class);

    private static final int WAKES_PER_SECOND_AFTER_RECONNECT = 2000;
    private static final long MAX_WAKE_SPREAD_MS = 5000;
    /**
     * The most commits one notification announces: a group transaction's (16 works at most, each appending one
     * commit or a few); a longer range is not a group's and is ignored.
     */
    static final long MAX_ANNOUNCED = 10_000;

    private final SignalListener listener;
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
    private volatile SignalListener.Listening connection;
    private volatile boolean listening;

    /** The listening connection {@code listener} opens. */
    CommitNotifications(
            SignalListener listener,
            Vertx vertx,
            RealtimeSignals signals,
            SessionSet sessions,
            DeltaDelivery delivery,
            PresenceRelay presence,
            RealtimeMetrics metrics,
            BooleanSupplier draining) {
        this.listener = listener;
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
        List<SignalListener.Channel> channels = new ArrayList<>();
        channels.add(new SignalListener.Channel(signals.notificationChannel(), this::notified, this::commitsListened));
        // operator disconnects of an actor's or a client's sockets, announced by whichever pod took the admin request
        channels.add(new SignalListener.Channel(
                signals.controlChannel(),
                payload -> OperatorDisconnects.received(payload, sessions::of, metrics.failures()),
                () -> {}));
        if (presence.enabled()) {
            channels.add(new SignalListener.Channel(presence.channel(), presence::received, presence::listened));
        }
        connection = listener.listen(
                channels,
                SignalListener.owner(draining, e -> metrics.failures().failed(RealtimeFailures.Kind.LISTEN, e)));
        return commitsHeard;
    }

    /** The commit channel's {@code LISTEN} took effect: the first time, or again after a lost connection. */
    private void commitsListened() {
        if (listening) {
            // a re-LISTEN: whatever was committed while the connection was down was never announced here
            metrics.listenReconnect();
            wakeAllSpread();
            toListeners(RealtimeHub.CommitListener::notificationsLost);
        }
        listening = true;
        commitsHeard.complete(null);
    }

    /** Whether the LISTEN connection is (or was once) established: readiness waits for it. */
    boolean listening() {
        return listening;
    }

    /** Whether the connection was ever opened (then {@link #close} releases it). */
    boolean subscribed() {
        return connection != null;
    }

    /** Releases the LISTEN connection (at drain; no reconnect follows while the hub drains). */
    void close() {
        connection.close();
    }

    /**
     * A commit notification ({@link Announcement#parse}): an epoch rotation, or each announced commit fanned out in
     * notification order per partition.
     */
    private void notified(String payload) {
        Announcement a = Announcement.parse(payload);
        if (a == null) {
            return;
        }
        String partition = a.partition();
        if (a.epochRotated()) {
            delivery.epochRotated(partition);
            toListeners(l -> l.partitionReset(partition));
            return;
        }
        for (long s = a.first(); s <= a.last(); s++) {
            long seq = s;
            toListeners(l -> l.committed(partition, seq));
            delivery.committed(partition, seq);
        }
    }

    /**
     * A payload of the commit channel: {@code <partition>:<commitSeq>}, {@code <partition>:<first>-<last>} for a
     * group transaction's commits (at most {@link #MAX_ANNOUNCED}), or {@code <partition>:epoch} (§2.1).
     */
    record Announcement(String partition, long first, long last, boolean epochRotated) {
        /** The payload's announcement, or null for one of none of these shapes (ignored). */
        static Announcement parse(String payload) {
            int colon = payload.lastIndexOf(':');
            if (colon < 0) {
                return null;
            }
            String partition = payload.substring(0, colon);
            String seqs = payload.substring(colon + 1);
            if (RealtimeSignals.EPOCH_NOTIFICATION.equals(seqs)) {
                return new Announcement(partition, 0, -1, true);
            }
            long first;
            long last;
            int dash = seqs.indexOf('-', 1);
            try {
                first = Long.parseLong(dash < 0 ? seqs : seqs.substring(0, dash));
                last = dash < 0 ? first : Long.parseLong(seqs.substring(dash + 1));
            } catch (NumberFormatException e) {
                return null;
            }
            if (last < first || last - first >= MAX_ANNOUNCED) {
                return null;
            }
            return new Announcement(partition, first, last, false);
        }
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
