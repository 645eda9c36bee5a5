package dev.syncular.server.realtime;

import dev.syncular.server.storage.StorageBusy;
import dev.syncular.server.sync.RealtimeDelta;
import dev.syncular.server.sync.SyncRequestContext;
import dev.syncular.server.wire.realtime.ChannelTag;
import dev.syncular.server.wire.realtime.ControlMessage;
import dev.syncular.server.wire.realtime.ControlMessages;
import dev.syncular.server.wire.realtime.WakeReason;
import io.quarkus.websockets.next.WebSocketConnection;
import io.smallrye.mutiny.Uni;
import io.vertx.core.buffer.Buffer;
import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * One realtime connection (§8.1–§8.3): its identity, registrations and the §8.2 delivery state. All state
 * changes happen under the session's monitor (short, non-blocking sections); sends are issued in that order.
 *
 * <p>Delivery: {@link #observed} is the highest notification sequence seen. A notification that is not
 * {@code observed + 1} is a gap; a session behind at connect, with a gap, or that dropped a delta (oversize,
 * too many unacked, a socket round in flight) is {@link #suppressed}: matching commits answer a coalesced
 * {@code catchup-required} wake-up instead of deltas until an ack reaches {@link #observed}.
 *
 * <p>Exactly once, in order (§8.2, §8.7): a session is {@link #joining} from the moment it enters the hub until
 * {@link #joined} has re-read the partition's head and sent {@code hello} — notifications heard meanwhile are
 * only counted, so a commit between the upgrade and the open is neither lost nor delivered ahead of the hello.
 *
 * <p>Interleaving (§8.7, Appendix B 11 (d)): while a socket round is in flight no delta is written, and every
 * matching commit of the round's window is answered with a {@code catchup-required} wake-up, never a delta: the
 * round's own pushes, what its pull handed the client, and whatever this pod heard while the round was in flight
 * ({@link #heard}) — however late the commit's fan-out reaches the session, even after the post-round ack covered
 * it (the wake-up is then sent, nothing is suppressed). The round's last chunk is written under the session's
 * monitor ({@link #endRound}), so a delta never precedes it.
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
    /** The §8.7 outbound byte budget: every write of this connection goes through it. */
    final OutboundBudget outbound;

    private final LongSupplier clock;

    private List<RealtimeDelta.Registration> registrations;
    private Set<String> scopeKeys;
    private long observed;
    private boolean suppressed;
    /** In the hub, {@code hello} not sent yet (§8.1): notifications are counted, nothing is sent. */
    private boolean joining = true;
    /** The highest commit notified while {@link #joining}. */
    private long joinSeen;
    /** A wake-up asked for while {@link #joining}; sent right after the hello. */
    private WakeReason joinWake;
    /** The partition's log epoch was rotated while {@link #joining}: the session stays fenced past its hello. */
    private boolean joinRotated;
    /**
     * The window of the socket rounds (§8.7): commits above {@code roundFloor} ({@link #observed} when the latest
     * round began) up to {@code roundUpTo} (the highest commit a round pushed, pulled or heard while in flight) are
     * the rounds': never a delta, a wake-up whenever their notification arrives.
     */
    private long roundFloor;

    private long roundUpTo;
    /**
     * A socket round's request is complete and its response's {@code END} not written yet (§8.7). Written under the
     * monitor; volatile so {@link #heard} skips the monitor between rounds.
     */
    private volatile boolean roundInFlight;
    /** A wake-up was sent and no ack or round has happened since: further wake-ups coalesce into it. */
    private boolean wakeOutstanding;
    /** The commitSeqs of deltas sent and not acknowledged yet. */
    private final ArrayDeque<Long> unacked = new ArrayDeque<>();

    /** When a frame of the client was last read, on {@link SilenceWatch#MONOTONIC_MS} (§8.5 idle reaping). */
    private volatile long lastHeardMs;
    /** Set when the connection left the hub; a registration arriving later is not recorded (§8.6.1). */
    volatile boolean closed;
    /** §8.6 this connection's presence publish rate (issue 45; {@link PresenceRate#OFF}: no cap). */
    final PresenceRate presenceRate;
    /** Where failed writes are logged and counted (the hub's, set when the channel opens the session). */
    volatile RealtimeFailures failures = RealtimeFailures.UNREGISTERED;
    /**
     * The creation time (epoch ms) of the oldest commit this client is owed that did not go out as a delta, {@code 0}
     * when none; written under the monitor, read without it by {@link StalestClients}.
     */
    private volatile long owedSinceMs;
    /** What holds the owed commits ({@link #owedSinceMs}). */
    private volatile Staleness owedFor = Staleness.PULL_INTERVAL;

    RealtimeSession(
            String sessionId,
            SyncRequestContext ctx,
            String clientId,
            String logEpoch,
            WebSocketConnection connection,
            OutboundBudget outbound,
            LongSupplier clock,
            List<RealtimeDelta.Registration> registrations,
            long latestCursor,
            boolean behind,
            long maxRequestBytes,
            StorageBusy storageBusy,
            PresenceRate presenceRate) {
        this.rounds = new SocketRound(maxRequestBytes, storageBusy);
        this.presenceRate = presenceRate;
        this.outbound = outbound;
        this.sessionId = sessionId;
        this.ctx = ctx;
        this.clientId = clientId;
        this.logEpoch = logEpoch;
        this.connection = connection;
        this.clock = clock;
        this.observed = latestCursor;
        this.suppressed = behind;
        this.lastHeardMs = SilenceWatch.MONOTONIC_MS.getAsLong();
        register(registrations);
    }

    /** A frame of the client (a message or a pong) was read now. */
    void readFromClient() {
        lastHeardMs = SilenceWatch.MONOTONIC_MS.getAsLong();
    }

    /**
     * §8.5: whether the idle reaper closes this socket at {@code tick}. Never while a round of it is in flight: the
     * client waits for the pod's answer, and the pod may be the one too busy to read its pongs (an event loop held up
     * under load); the round's end or its failed write settles the socket.
     */
    boolean idleAt(SilenceWatch silence, SilenceWatch.Tick tick) {
        return !roundInFlight && silence.silent(tick, lastHeardMs);
    }

    /** Replaces the registrations (§8.7); returns the scope keys held before (§8.6.3 re-derives presence). */
    synchronized Set<String> register(List<RealtimeDelta.Registration> regs) {
        Set<String> before = scopeKeys == null ? Set.of() : scopeKeys;
        this.registrations = List.copyOf(regs);
        Set<String> keys = new HashSet<>();
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
    enum Decision {
        IGNORE,
        /** A wake-up: the client is owed the commit until it pulls. */
        WAKE,
        /** A wake-up for a commit of a socket round's window the client already holds (§8.7): nothing is owed. */
        REMIND,
        DELIVER
    }

    synchronized Decision onCommit(long seq, boolean matching, int maxUnacked) {
        if (joining) {
            joinSeen = Math.max(joinSeen, seq); // hello is not out yet: it accounts for this commit (§8.1)
            return Decision.IGNORE;
        }
        // §8.7 interleaving: a commit of a round's window is answered with a wake-up, never a delta — also when the
        // client's post-round ack came first (then it already holds the commit: nothing is suppressed)
        boolean ofRound = ofRound(seq);
        if (seq <= observed) {
            // a duplicate or late notification, or one the client holds: nothing to bridge
            return ofRound && matching ? Decision.REMIND : Decision.IGNORE;
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
        if (ofRound || unacked.size() >= maxUnacked) {
            // §8.7: the round's own commit, one its pull handed over or one committed during it; the ack that
            // covers it lifts the suppression (§8.2)
            suppressed = true;
            return Decision.WAKE;
        }
        return Decision.DELIVER;
    }

    /** Whether commit {@code seq} is of a socket round's window (§8.7): never a delta. */
    private boolean ofRound(long seq) {
        return roundInFlight || (seq > roundFloor && seq <= roundUpTo);
    }

    /**
     * Sends {@code delta} (already encoded) unless it is too large, in which case the session drops to a wake;
     * whether the delta went out.
     */
    synchronized boolean deliver(long seq, long createdAtMs, byte[] encoded, long maxBytes, RealtimeMetrics metrics) {
        if (suppressed || joining || ofRound(seq)) {
            owe(createdAtMs, Staleness.PULL_INTERVAL);
            wake(WakeReason.CATCHUP_REQUIRED, metrics);
            return false;
        }
        if (encoded.length + 1 > maxBytes) {
            suppressed = true;
            owe(createdAtMs, Staleness.PULL_INTERVAL);
            wake(WakeReason.DELTA_TOO_LARGE, metrics);
            return false;
        }
        if (!outbound.fits(encoded.length + 1)) {
            // §8.7 backpressure: the client does not drain; a wake-up instead, a round resumes it (§8.2)
            suppressed = true;
            owe(createdAtMs, Staleness.SOCKET_BACKPRESSURE);
            outbound.refused();
            wake(WakeReason.CATCHUP_REQUIRED, metrics);
            return false;
        }
        Buffer b = Buffer.buffer(encoded.length + 1)
                .appendByte((byte) ChannelTag.DELTA)
                .appendBytes(encoded);
        unacked.add(seq);
        metrics.delta();
        outbound.send(
                connection.sendBinary(b),
                b.length(),
                e -> failures.report(RealtimeFailures.Kind.DELTA_WRITE, e, connection));
        return true;
    }

    /** Sends a wake-up unless one is outstanding (§8.3: coalescible). */
    synchronized void wake(WakeReason reason, RealtimeMetrics metrics) {
        if (joining) {
            joinWake = joinWake == WakeReason.RESET_REQUIRED ? joinWake : reason;
            return;
        }
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

    /**
     * A commit created at {@code atMs} reaches this client only by a pull, held by {@code why}: the client is owed
     * it from then until an ack or a socket round catches it up. A socket's backpressure outranks the other reasons.
     */
    synchronized void owe(long atMs, Staleness why) {
        boolean fresh = owedSinceMs == 0;
        if (fresh || atMs < owedSinceMs) {
            owedSinceMs = Math.max(1, atMs);
        }
        if (fresh || why == Staleness.SOCKET_BACKPRESSURE) {
            owedFor = why;
        }
    }

    /** The creation time of the oldest commit owed ({@link #owe}), {@code 0} when none. */
    long owedSinceMs() {
        return owedSinceMs;
    }

    /** What holds the owed commits. */
    Staleness owedFor() {
        return owedFor;
    }

    /** The client caught up: nothing is owed. */
    private void caughtUp() {
        owedSinceMs = 0;
        owedFor = Staleness.PULL_INTERVAL;
    }

    /** No more deltas until the client has caught up; the wake-up that tells it follows ({@link #lostNotifications}). */
    synchronized void fence() {
        suppressed = true;
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
        roundFloor = 0;
        roundUpTo = 0;
        joinRotated = joining;
        unacked.clear();
        logEpoch = null;
        wakeOutstanding = false;
        caughtUp(); // the restored log's commits are owed anew as they are notified
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
            caughtUp();
        } else if (suppressed) {
            wake(WakeReason.CATCHUP_REQUIRED, metrics);
        }
    }

    /**
     * §8.1, registration before the head: the session is in the hub and {@code head} was read since (the
     * prepared head as the fallback when that read failed, with {@code reliable} false). Sets the session's
     * position to the newer of that head and any commit notified meanwhile, decides {@code requiresSync}, and
     * sends {@code first} (if any) and {@code hello} through {@code hello} — under this monitor, so every delta
     * or wake-up is written after it. Answers the hello write.
     */
    synchronized CompletionStage<Void> joined(
            long head,
            String headEpoch,
            boolean reliable,
            boolean registered,
            long cursor,
            Function<HelloState, String> hello,
            String first,
            RealtimeMetrics metrics) {
        joining = false;
        long latest = Math.max(head, joinSeen);
        boolean requiresSync = !registered || cursor < latest || !reliable || joinWake != null;
        if (!joinRotated) {
            logEpoch = headEpoch;
            observed = latest;
        }
        suppressed = requiresSync;
        if (first != null) {
            sendText(first);
        }
        String helloJson = hello.apply(new HelloState(cursor, latest, requiresSync));
        CompletionStage<Void> out = outbound.tracked(connection.sendText(helloJson), helloJson.length())
                .subscribeAsCompletionStage();
        if (joinWake != null) {
            WakeReason reason = joinWake;
            joinWake = null;
            wake(reason, metrics);
        }
        return out;
    }

    /** What {@code hello} says (§8.1). */
    record HelloState(long cursor, long latestCursor, boolean requiresSync) {}

    /**
     * §8.7: a socket round's request is complete and the round begins; {@code false} when one is in flight already
     * (round bytes while a response streams: the caller closes). The commits from here on are the round's window;
     * an outstanding wake-up no longer coalesces what follows (the client cleared its sync-needed signal as the
     * round began, §8.4, so a wake-up during the round must reach it).
     */
    synchronized boolean beginRound() {
        if (roundInFlight) {
            return false;
        }
        roundInFlight = true;
        roundFloor = observed;
        wakeOutstanding = false;
        return true;
    }

    /** Whether a socket round is in flight (§8.7). */
    synchronized boolean roundInFlight() {
        return roundInFlight;
    }

    /**
     * Commit {@code seq} was heard on the pod's commit channel: heard while a round is in flight, it is of the
     * round's window (§8.7), however late its fan-out reaches the session.
     */
    void heard(long seq) {
        if (!roundInFlight) {
            return; // no round: nothing to mark (a round beginning now begins after this commit was heard)
        }
        synchronized (this) {
            if (roundInFlight && seq > roundUpTo) {
                roundUpTo = seq;
            }
        }
    }

    /**
     * §8.7: a round about to answer pushed commits up to {@code pushed} and, when it pulled successfully, handed
     * the client every commit up to {@code pulled} (the lowest {@code SUB_END.nextCursor} of its complete active
     * subscriptions; -1 without). Both are of the round's window: no delta is ever sent for them.
     */
    synchronized void roundPlanned(long pushed, long pulled) {
        roundUpTo = Math.max(roundUpTo, Math.max(pushed, pulled));
        if (pulled >= observed) {
            caughtUp(); // the round's response carries every commit the client was owed
        }
    }

    /**
     * The round's last chunk (its response's {@code END}): the round ends and the chunk's write is issued under this
     * monitor, so no delta is written before it (§8.7: none while a response stream is in flight).
     */
    synchronized Uni<Void> endRound(Buffer last) {
        roundInFlight = false;
        CompletableFuture<Void> written = sendRound(last).subscribeAsCompletionStage();
        return Uni.createFrom().completionStage(written);
    }

    synchronized long observed() {
        return observed;
    }

    /**
     * A control message, in order with every other write of the session. One that would take the outbound
     * buffer past twice its budget closes the connection instead: it cannot be kept exact (§8.6, §8.3).
     */
    synchronized void sendText(String json) {
        long bytes = json.length(); // the UTF-8 size is at least this; control messages are mostly ASCII
        if (!outbound.bearable(bytes)) {
            outbound.closeStuck();
            return;
        }
        outbound.send(
                connection.sendText(json),
                bytes,
                e -> failures.report(RealtimeFailures.Kind.CONTROL_WRITE, e, connection));
    }

    /** A §8.5 heartbeat: skipped while anything of the connection is still waiting to be written. */
    synchronized void sendHeartbeat(String json) {
        if (outbound.pending() == 0) {
            outbound.send(
                    connection.sendText(json),
                    json.length(),
                    e -> failures.report(RealtimeFailures.Kind.CONTROL_WRITE, e, connection));
        }
    }

    /** One chunk of a socket round's response (§8.7), counted while it is written. */
    Uni<Void> sendRound(Buffer chunk) {
        return outbound.tracked(connection.sendBinary(chunk), chunk.length());
    }

    WebSocketConnection connection() {
        return connection;
    }
}
