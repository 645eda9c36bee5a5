package dev.syncular.server.operations;

import dev.syncular.server.sync.SyncRequestContext;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One connection of the REMOTE.md §6 watch socket: its watches by {@code watchId}, each with the §6 run state —
 * at most one run in flight, one dirty flag for the commits that arrive meanwhile (so at most one pending
 * rerun), and no run starting sooner than {@link WatchConfig#minRerunInterval()} after the previous one.
 * Every answer goes out in the framing of the message that registered the watch (binary or text).
 *
 * <p>{@code unwatch} removes the watch and suppresses a result still running for it: the removal and the
 * decision to send a result are made under the session's lock, so nothing of the watch is sent once the
 * {@code unwatch} was handled. Closing removes every watch. A watch whose first run fails is removed too (its
 * id is free again, it holds no cap); a rerun failure is answered {@code watch_error} and the watch stays.
 */
public final class WatchSession {
    /** Where a session's messages go: the connection, in a framing. */
    public interface Outbound {
        void send(byte[] message, boolean binary);
    }

    final SyncRequestContext ctx;
    private final QueryWatches hub;
    private final Outbound outbound;
    private final Map<String, Watch> watches = new HashMap<>();
    private boolean closed;

    /** One registered watch and its §6 run state (guarded by the watch itself). */
    static final class Watch {
        final String watchId;
        final String clientId;
        final String operationId;
        final OperationValue params;
        final Set<String> tables;
        final boolean binary;
        boolean running;
        boolean dirty;
        boolean timerPending;
        boolean removed;
        boolean answered;
        boolean started;
        long lastStartNanos;

        Watch(WatchMessage.Watch m, List<String> tables, boolean binary) {
            this.watchId = m.watchId();
            this.clientId = m.clientId();
            this.operationId = m.operationId();
            this.params = m.params();
            this.tables = Set.copyOf(tables);
            this.binary = binary;
        }
    }

    WatchSession(SyncRequestContext ctx, QueryWatches hub, Outbound outbound) {
        this.ctx = ctx;
        this.hub = hub;
        this.outbound = outbound;
    }

    /** One client message, in the framing it came in ({@code binary} or text). Never throws. */
    public void receive(byte[] message, boolean binary) {
        long start = System.nanoTime();
        answer(WatchMessage.decode(message, hub.config().maxMessageBytes()), binary, start);
    }

    /**
     * A client message too large for the transport to hold, dropped by it (its bytes never reached the session):
     * answered as any message above the cap, {@code operation.invalid_request} in its framing.
     */
    public void tooLarge(boolean binary) {
        answer(WatchMessage.tooLarge(), binary, System.nanoTime());
    }

    private void answer(WatchMessage m, boolean binary, long start) {
        if (m instanceof WatchMessage.Invalid invalid) {
            OperationValue error = WatchMessage.error(invalid.watchId(), invalid.failure());
            hub.operations().watchAnswered(OperationObserver.UNREGISTERED, error, System.nanoTime() - start);
            send(error, binary);
        } else if (m instanceof WatchMessage.Unwatch u) {
            unwatch(u.watchId());
        } else if (m instanceof WatchMessage.Watch w) {
            watch(w, binary, start);
        }
    }

    private void watch(WatchMessage.Watch m, boolean binary, long start) {
        OperationException refused = null;
        Watch w = null;
        synchronized (this) {
            if (closed) {
                return;
            }
            List<String> tables = hub.operations().tablesOf(m.operationId()).orElse(null);
            if (watches.containsKey(m.watchId())) {
                // §6: "Reusing an active ID fails with operation.invalid_request"; the active watch stays
                refused = OperationException.invalid("watchId is already active on this connection");
            } else if (tables == null) {
                refused = new OperationException(OperationErrorCode.UNKNOWN, "no query is registered with this id");
            } else if (watches.size() >= hub.config().maxPerConnection()) {
                refused = new OperationException(
                        OperationErrorCode.WATCH_LIMIT, "this connection holds its maximum of watches");
            } else if (!hub.reserve(ctx.partition())) {
                refused = new OperationException(
                        OperationErrorCode.WATCH_LIMIT,
                        "the server holds its maximum of watches (of the pod or the partition)");
            } else {
                w = new Watch(m, tables, binary);
                watches.put(m.watchId(), w);
            }
        }
        if (refused != null) {
            OperationValue error = WatchMessage.error(m.watchId(), refused);
            hub.operations().watchAnswered(m.operationId(), error, System.nanoTime() - start);
            send(error, binary);
            return;
        }
        hub.request(this, w);
    }

    private void unwatch(String watchId) {
        Watch w;
        synchronized (this) {
            w = watches.remove(watchId);
        }
        if (w != null) {
            removed(w);
        }
    }

    private void removed(Watch w) {
        synchronized (w) {
            if (w.removed) {
                return;
            }
            w.removed = true;
        }
        hub.release(ctx.partition());
    }

    /** The connection closed: every watch is removed (§6), a run in flight answers nothing. */
    public void close() {
        List<Watch> all;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            all = new ArrayList<>(watches.values());
            watches.clear();
        }
        all.forEach(this::removed);
        hub.closed(this);
    }

    /** The watches whose query reads one of {@code tables} ({@link CommitTables#ALL}: every watch). */
    List<Watch> watching(Set<String> tables) {
        List<Watch> out = new ArrayList<>();
        synchronized (this) {
            for (Watch w : watches.values()) {
                if (tables == CommitTables.ALL || w.tables.stream().anyMatch(tables::contains)) {
                    out.add(w);
                }
            }
        }
        return out;
    }

    synchronized int size() {
        return watches.size();
    }

    /** What became of a run's answer. */
    enum Answered {
        /** Not sent: the watch was removed meanwhile (unwatch, close). */
        SUPPRESSED,
        /** Sent; the watch stays registered. */
        SENT,
        /** Sent, and the watch removed (its first run failed). */
        SENT_AND_REMOVED
    }

    /**
     * The answer of one run of {@code w}: sent unless the watch was removed meanwhile (unwatch, close). A failed
     * first run removes the watch. {@code beforeSend} (the metrics) runs just before it is sent.
     */
    Answered answer(Watch w, OperationValue answer, boolean failed, Runnable beforeSend) {
        boolean drop;
        synchronized (this) {
            if (closed || watches.get(w.watchId) != w) {
                return Answered.SUPPRESSED; // §6: unwatch suppresses a result that was still running
            }
            boolean first;
            synchronized (w) {
                first = !w.answered;
                w.answered = true;
            }
            drop = failed && first;
            if (drop) {
                watches.remove(w.watchId);
                removed(w); // released before the answer goes out: the client sees the place free
            }
            beforeSend.run();
            send(answer, w.binary);
        }
        return drop ? Answered.SENT_AND_REMOVED : Answered.SENT;
    }

    private void send(OperationValue message, boolean binary) {
        outbound.send(TaggedValueCodec.encode(message), binary);
    }
}
