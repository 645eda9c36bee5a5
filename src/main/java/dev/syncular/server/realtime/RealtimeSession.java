package dev.syncular.server.realtime;

import dev.syncular.server.sync.RealtimeDelta;
import dev.syncular.server.sync.SyncRequestContext;
import dev.syncular.server.wire.realtime.ChannelTag;
import dev.syncular.server.wire.realtime.ControlMessage;
import dev.syncular.server.wire.realtime.ControlMessages;
import dev.syncular.server.wire.realtime.WakeReason;
import io.quarkus.websockets.next.WebSocketConnection;
import io.vertx.core.buffer.Buffer;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * One realtime connection (§8.1–§8.3): its identity, registrations and the §8.2 delivery state. All state
 * changes happen under the session's monitor (short, non-blocking sections); sends are issued in that order.
 *
 * <p>Delivery: {@link #observed} is the highest notification sequence seen. A notification that is not
 * {@code observed + 1} is a gap; a session behind at connect, with a gap, or that dropped a delta (oversize,
 * too many unacked, a socket round in flight) is {@link #suppressed}: matching commits answer a coalesced
 * {@code catchup-required} wake-up instead of deltas until an ack reaches {@link #observed}.
 */
final class RealtimeSession {
    final String sessionId;
    final SyncRequestContext ctx;
    final String clientId;
    /** The partition's log epoch as of the connect or the last socket round; acks require it (§8.2). */
    volatile String logEpoch;
    /** The socket-round state (§8.7). */
    final SocketRound rounds;
    private final WebSocketConnection connection;
    private final LongSupplier clock;

    private List<RealtimeDelta.Registration> registrations;
    private Set<String> scopeKeys;
    private long observed;
    private boolean suppressed;
    /** A wake-up was sent and no ack or round has happened since: further wake-ups coalesce into it. */
    private boolean wakeOutstanding;
    /** The commitSeqs of deltas sent and not acknowledged yet. */
    private final ArrayDeque<Long> unacked = new ArrayDeque<>();
    boolean roundInFlight;
    volatile long lastHeardMs;
    /** Where failed writes are logged and counted (the hub's, set when the channel opens the session). */
    volatile RealtimeFailures failures = RealtimeFailures.UNREGISTERED;

    RealtimeSession(String sessionId, SyncRequestContext ctx, String clientId, String logEpoch,
            WebSocketConnection connection, LongSupplier clock, List<RealtimeDelta.Registration> registrations,
            long latestCursor, boolean behind, long maxRequestBytes) {
        this.rounds = new SocketRound(maxRequestBytes);
        this.sessionId = sessionId;
        this.ctx = ctx;
        this.clientId = clientId;
        this.logEpoch = logEpoch;
        this.connection = connection;
        this.clock = clock;
        this.observed = latestCursor;
        this.suppressed = behind;
        this.lastHeardMs = clock.getAsLong();
        register(registrations);
    }

    /** Replaces the registrations (§8.7); returns the scope keys held before (§8.6.3 re-derives presence). */
    synchronized Set<String> register(List<RealtimeDelta.Registration> regs) {
        Set<String> before = scopeKeys == null ? Set.of() : scopeKeys;
        this.registrations = List.copyOf(regs);
        Set<String> keys = new java.util.HashSet<>();
        regs.forEach(r -> keys.addAll(r.scopeKeys()));
        this.scopeKeys = Set.copyOf(keys);
        return before;
    }

    /** The effective scope keys of the registrations: the fanout and presence grant (§8.6.3). */
    synchronized Set<String> scopeKeys() {
        return scopeKeys;
    }

    synchronized boolean holds(String scopeKey) {
        return scopeKeys.contains(scopeKey);
    }

    synchronized List<RealtimeDelta.Registration> registrations() {
        return registrations;
    }

    synchronized boolean matches(Set<String> commitKeys) {
        for (String k : commitKeys) {
            if (scopeKeys.contains(k)) {
                return true;
            }
        }
        return false;
    }

    /** What to do with notified commit {@code seq} (§8.2); the caller builds the delta only for DELIVER. */
    enum Decision { IGNORE, WAKE, DELIVER }

    synchronized Decision onCommit(long seq, boolean matching, int maxUnacked) {
        if (seq <= observed) {
            return Decision.IGNORE; // a duplicate or late notification: nothing new to bridge
        }
        boolean adjacent = seq == observed + 1;
        observed = seq;
        if (!adjacent) {
            suppressed = true;
            return Decision.WAKE;
        }
        if (!matching) {
            return Decision.IGNORE;
        }
        if (suppressed) {
            return Decision.WAKE;
        }
        if (roundInFlight || unacked.size() >= maxUnacked) {
            suppressed = true;
            return Decision.WAKE;
        }
        return Decision.DELIVER;
    }

    /**
     * Sends {@code delta} (already encoded) unless it is too large, in which case the session drops to a wake;
     * whether the delta went out.
     */
    synchronized boolean deliver(long seq, byte[] encoded, long maxBytes, RealtimeMetrics metrics) {
        if (suppressed || roundInFlight) {
            wake(WakeReason.CATCHUP_REQUIRED, metrics);
            return false;
        }
        if (encoded.length + 1 > maxBytes) {
            suppressed = true;
            wake(WakeReason.DELTA_TOO_LARGE, metrics);
            return false;
        }
        Buffer b = Buffer.buffer(encoded.length + 1).appendByte((byte) ChannelTag.DELTA).appendBytes(encoded);
        unacked.add(seq);
        metrics.delta();
        connection.sendBinary(b).subscribe().with(v -> { },
                e -> failures.report(RealtimeFailures.Kind.DELTA_WRITE, e, connection));
        return true;
    }

    /** Sends a wake-up unless one is outstanding (§8.3: coalescible). */
    synchronized void wake(WakeReason reason, RealtimeMetrics metrics) {
        if (wakeOutstanding) {
            return;
        }
        wakeOutstanding = true;
        metrics.wake(reason);
        sendText(ControlMessages.render(new ControlMessage.Wake(observed, reason, clock.getAsLong())));
    }

    /** A commit the session cannot be given as a delta: it falls behind until the client catches up. */
    synchronized void suppress(WakeReason reason, RealtimeMetrics metrics) {
        suppressed = true;
        wake(reason, metrics);
    }

    /** A pod-level gap (the LISTEN connection was lost): deliveries are suspect until the client catches up. */
    synchronized void lostNotifications(RealtimeMetrics metrics) {
        suppressed = true;
        wakeOutstanding = false;
        wake(WakeReason.CATCHUP_REQUIRED, metrics);
    }

    /**
     * §2.1 / §8.3: the partition's log epoch was rotated. The session is fenced (suppressed, its observed sequence
     * forgotten so the restored log's commits are not mistaken for duplicates, its epoch cleared so no ack of the
     * prior timeline advances a cursor) and sent {@code reset-required}, uncoalesced.
     */
    synchronized void epochRotated(RealtimeMetrics metrics) {
        suppressed = true;
        observed = 0;
        unacked.clear();
        logEpoch = null;
        wakeOutstanding = false;
        wake(WakeReason.RESET_REQUIRED, metrics);
    }

    /**
     * §8.2: an ack lifts suppression once it reaches the highest observed sequence, and advances it. An ack
     * that leaves a suppressed session still behind (a commit observed during the client's catch-up pull)
     * answers a fresh wake-up at once, so the missed commit is pulled without waiting for the next one.
     */
    synchronized void ack(long cursor, RealtimeMetrics metrics) {
        while (!unacked.isEmpty() && unacked.peek() <= cursor) {
            unacked.poll();
        }
        wakeOutstanding = false;
        if (cursor >= observed) {
            observed = cursor;
            suppressed = false;
            unacked.clear();
        } else if (suppressed) {
            wake(WakeReason.CATCHUP_REQUIRED, metrics);
        }
    }

    synchronized long observed() {
        return observed;
    }

    void sendText(String json) {
        connection.sendText(json).subscribe().with(v -> { },
                e -> failures.report(RealtimeFailures.Kind.CONTROL_WRITE, e, connection));
    }

    WebSocketConnection connection() {
        return connection;
    }
}
