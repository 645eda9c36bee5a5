package dev.syncular.server.realtime;

import io.quarkus.websockets.next.CloseReason;
import io.quarkus.websockets.next.WebSocketConnection;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.function.Consumer;
import org.jboss.logging.Logger;

/**
 * The outbound byte budget of one connection (§8.7 "Backpressure", §8.2 flow control): every message handed to
 * the socket counts its bytes until its write completes (the transport took it), so {@link #pending} is what the
 * pod buffers for a client that does not read.
 *
 * <ul>
 *   <li>A delta that would take the pending bytes past the budget is not sent: the session drops to a
 *       {@code catchup-required} wake-up (§8.3) and resumes after a round, as for any dropped delta. The first
 *       such refusal starts the stuck deadline.</li>
 *   <li>A connection whose buffer has not emptied once by the deadline, or that would exceed twice
 *       the budget with any message (presence events and wake-ups included: a connection that missed one cannot
 *       be kept exact), is closed with {@link #STUCK_CLOSE_CODE}; if the close cannot reach it (it does not
 *       read), its transport is closed a short while later.</li>
 * </ul>
 * A write that fails is reported to its caller's failure log ({@link RealtimeFailures}): it never reaches the
 * commit whose fanout issued it.
 */
final class OutboundBudget {
    private static final Logger LOG = Logger.getLogger(OutboundBudget.class);
    /** The close code of a connection closed for not draining its outbound buffer (docs/REALTIME.md). */
    static final int STUCK_CLOSE_CODE = 4290;

    static final String STUCK_CLOSE_REASON = "outbound buffer not drained";
    /** How long a stuck connection's close frame may take before its transport is closed. */
    private static final long FORCE_CLOSE_MAX_MS = 5_000;

    private final WebSocketConnection connection;
    private final Runnable closeTransport;
    private final Vertx vertx;
    private final long budget;
    private final long stuckMs;
    private final RealtimeMetrics metrics;
    private final SocketBudget pod;
    private long pending;
    /**
     * The part of {@link #pending} that is a response stream the client asked for (a round's chunks, §8.7; the
     * hello): bounded by the response cap, not by the budget, so it never makes a control message unbearable.
     */
    private long streaming;

    private long deadlineTimer = -1;
    /** The buffer emptied at least once since the refusal that started the deadline: the client reads. */
    private boolean drained;

    private boolean closing;

    /**
     * {@code closeTransport} closes the TCP connection under the socket (a no-op where the endpoint offers none);
     * {@code budget} in bytes; {@code stuck} the deadline.
     */
    OutboundBudget(
            WebSocketConnection connection,
            Runnable closeTransport,
            Vertx vertx,
            long budget,
            Duration stuck,
            RealtimeMetrics metrics,
            SocketBudget pod) {
        this.connection = connection;
        this.closeTransport = closeTransport;
        this.vertx = vertx;
        this.budget = budget;
        this.stuckMs = Math.max(1, stuck.toMillis());
        // the first refusal starts the deadline; the buffer has to empty before it to count as drained
        this.metrics = metrics;
        this.pod = pod;
    }

    /** Bytes handed to the socket and not yet written. */
    synchronized long pending() {
        return pending;
    }

    /**
     * Whether a delta of {@code bytes} fits: nothing pending, or the total stays within the budget; and the pod's
     * sockets hold room for it ({@link SocketBudget}).
     */
    synchronized boolean fits(long bytes) {
        return (pending == 0 || pending + bytes <= budget) && pod.fits(bytes);
    }

    /**
     * Whether a message of {@code bytes} may be queued at all: twice the budget, or nothing pending — a round's
     * response in flight not counted (§8.7: a wake-up interleaves with a round's stream, whatever its size).
     */
    synchronized boolean bearable(long bytes) {
        long unsolicited = pending - streaming;
        return unsolicited == 0 || unsolicited + bytes <= 2 * budget;
    }

    /** A delta was refused for the budget: the stuck deadline starts (once). */
    synchronized void refused() {
        metrics.budgetRefusal();
        if (deadlineTimer >= 0 || closing) {
            return;
        }
        drained = false;
        deadlineTimer = vertx.setTimer(stuckMs, t -> deadline());
    }

    private void deadline() {
        synchronized (this) {
            deadlineTimer = -1;
            if (drained || pending == 0) {
                return; // it drained: the wake-up it got leads it back through a round
            }
        }
        closeStuck();
    }

    /** Closes the connection as stuck (§8.7: its buffering must stay bounded). */
    void closeStuck() {
        synchronized (this) {
            if (closing) {
                return;
            }
            closing = true;
            if (deadlineTimer >= 0) {
                vertx.cancelTimer(deadlineTimer);
                deadlineTimer = -1;
            }
        }
        metrics.stuckClose();
        LOG.debugf("Closing realtime connection %s: %d outbound bytes not drained", connection.id(), pending());
        connection
                .close(new CloseReason(STUCK_CLOSE_CODE, STUCK_CLOSE_REASON))
                .subscribe()
                .with(v -> {}, e -> {});
        // the close frame waits behind what the client does not read; the transport goes regardless (a no-op once
        // the close handshake ended it)
        vertx.setTimer(Math.min(stuckMs, FORCE_CLOSE_MAX_MS), t -> closeTransport.run());
    }

    /**
     * Sends through {@code write} now (subscribed at once, so writes leave in call order), counting {@code bytes}
     * until it completes; a failure goes to {@code failed} (logged and counted there), never further.
     */
    void send(Uni<Void> write, long bytes, Consumer<Throwable> failed) {
        add(bytes);
        try {
            write.subscribe().with(v -> done(bytes), e -> {
                done(bytes);
                failed.accept(e);
            });
        } catch (RuntimeException e) {
            done(bytes);
            failed.accept(e);
        }
    }

    /**
     * {@code write}, lazily, counted while in flight as part of a response stream (a round's chunks, sent one after
     * the other; the hello).
     */
    Uni<Void> tracked(Uni<Void> write, long bytes) {
        return Uni.createFrom()
                .deferred(() -> {
                    add(bytes, true);
                    return write;
                })
                .onTermination()
                .invoke((v, e, cancelled) -> done(bytes, true));
    }

    private void add(long bytes) {
        add(bytes, false);
    }

    private void done(long bytes) {
        done(bytes, false);
    }

    private synchronized void add(long bytes, boolean stream) {
        pending += bytes;
        pod.written(bytes);
        if (stream) {
            streaming += bytes;
        }
    }

    private synchronized void done(long bytes, boolean stream) {
        pending -= bytes;
        pod.done(bytes);
        if (stream) {
            streaming -= bytes;
        }
        if (pending == 0) {
            drained = true;
        }
    }
}
