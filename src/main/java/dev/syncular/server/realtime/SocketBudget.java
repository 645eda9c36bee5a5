package dev.syncular.server.realtime;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The pod's memory for its sockets, in bytes ({@code syncular.realtime.socket-budget}): a fixed
 * {@link #SOCKET_BYTES} for every open socket (sync and operation-watch sockets alike) and every socket's outbound
 * bytes not yet written (§8.7). It bounds what {@code max-connections} (a count) and each connection's outbound
 * budget (§8.7 backpressure) do not: a pod whose heap cannot hold its sockets.
 *
 * <ul>
 *   <li>An upgrade is admitted while the sockets' bytes, with one more socket, stay within three quarters of the
 *       budget; the last quarter is kept for outbound bytes, so a pod whose socket places are all taken still sends
 *       its deltas. Past it the upgrade is refused 429 {@code sync.websocket_connection_limit} (reason {@code
 *       socket_budget}): the client retries, perhaps on another pod, and pulls meanwhile.
 *   <li>A delta that does not fit is not sent: the connection gets a {@code catchup-required} wake-up (§8.3) and
 *       pulls, as for a connection past its own budget. Control messages (wake-ups, presence, a round's response)
 *       are counted, never refused here.
 * </ul>
 *
 * Thread-safe (atomics): sockets open and close, and writes complete, on every event loop.
 */
final class SocketBudget {
    /**
     * What one open socket holds on the heap, idle: about 15 KB after a full GC at 3,000 idle sockets
     * (docs/BENCHMARKS.md, "Realtime"; 10,000 idle sockets took 146 MB).
     */
    static final long SOCKET_BYTES = 16 * 1024;

    /** The budget of a hub with no pod-wide bound (the conformance host's instances). */
    static final long OFF = Long.MAX_VALUE;

    private final long limit;
    private final AtomicLong inUse = new AtomicLong();

    /** {@code limit} bytes ({@link #OFF}: unbounded); its gauges go to {@code registry} when bounded. */
    SocketBudget(long limit, MeterRegistry registry) {
        this.limit = limit;
        if (limit != OFF) {
            Gauge.builder("syncular.realtime.socket.bytes", inUse, AtomicLong::get)
                    .description("Bytes counted for the pod's open sockets: a fixed share per socket and their"
                            + " outbound bytes not yet written")
                    .baseUnit("bytes")
                    .strongReference(true)
                    .register(registry);
            Gauge.builder("syncular.realtime.socket.budget", () -> limit)
                    .description("syncular.realtime.socket-budget")
                    .baseUnit("bytes")
                    .strongReference(true)
                    .register(registry);
        }
    }

    /**
     * The default budget: a quarter of the maximum heap (48 MiB under {@code -Xmx192m}: about 2,300 sockets, and
     * 12 MiB kept for their outbound bytes).
     */
    static long defaultLimit(long maxHeapBytes) {
        return Math.max(SOCKET_BYTES, maxHeapBytes / 4);
    }

    /**
     * Whether one more socket fits in three quarters of the budget, the last quarter kept for outbound bytes: sockets
     * admitted up to the whole budget leave no room for any delta (docs/BENCHMARKS.md, "Realtime").
     */
    boolean admitsSocket() {
        return inUse.get() + SOCKET_BYTES <= limit - limit / 4;
    }

    /** A socket opened (counted whatever is left: the upgrade was admitted). */
    void socketOpened() {
        inUse.addAndGet(SOCKET_BYTES);
    }

    /** A socket counted by {@link #socketOpened} closed. */
    void socketClosed() {
        inUse.addAndGet(-SOCKET_BYTES);
    }

    /** Whether a delta of {@code bytes} fits beside what the pod's sockets hold. */
    boolean fits(long bytes) {
        return inUse.get() + bytes <= limit;
    }

    /** Outbound bytes handed to a socket. */
    void written(long bytes) {
        inUse.addAndGet(bytes);
    }

    /** Outbound bytes the transport took (or that failed). */
    void done(long bytes) {
        inUse.addAndGet(-bytes);
    }

    long inUse() {
        return inUse.get();
    }

    long limit() {
        return limit;
    }
}
