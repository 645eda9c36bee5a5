package dev.syncular.server.memory;

import dev.syncular.server.config.LimitsConfig;
import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The pod-wide budget, in bytes, for what is buffered on behalf of clients: every request body as its bytes
 * arrive (never reserved from {@code Content-Length}), the inflated bytes of a gzip body, every socket round's
 * request (§8.7), and every round's planned response until it is written ({@link #take}, {@link #hold}). A request
 * takes a {@link Lease} before any body byte is read; the lease grows with the bytes and is released when the
 * request no longer holds them.
 *
 * <p>Refusals are §10.2 {@code sync.rate_limited} (HTTP 429 with {@code Retry-After}, details
 * {@code reason: "memory_budget"} and {@code retryAfterMs}): a request whose declared length does not fit what is
 * left, or that arrives once the budget is spent, is refused before its body is read; one whose bytes stop
 * fitting while they arrive is refused then and its buffer dropped. The same request may succeed later.
 *
 * <p>Meters: {@code syncular.buffers.bytes} (in use), {@code syncular.buffers.budget.bytes} (the limit),
 * {@code syncular.buffers.refusals} (requests refused). Thread-safe; no lock.
 */
@Startup // meters exported from the start
@ApplicationScoped
public class BufferBudget {
    /** What a refusal suggests to wait, in {@code details.retryAfterMs} ({@code Retry-After: 1}). */
    static final long RETRY_AFTER_MS = 1000;

    private final long limit;
    private final AtomicLong inUse = new AtomicLong();
    private final Counter refusals;

    @Inject
    public BufferBudget(LimitsConfig config, MeterRegistry registry) {
        this.limit = config.bufferBudget()
                .map(m -> m.asLongValue())
                .orElseGet(() -> defaultLimit(Runtime.getRuntime().maxMemory()));
        Gauge.builder("syncular.buffers.bytes", inUse, AtomicLong::get)
                .strongReference(true)
                .baseUnit("bytes")
                .description(
                        "Bytes buffered on behalf of clients (request bodies, inflated bodies, socket rounds, planned"
                                + " responses)")
                .register(registry);
        Gauge.builder("syncular.buffers.budget.bytes", this, BufferBudget::limit)
                .strongReference(true)
                .baseUnit("bytes")
                .description("The pod-wide budget for bytes buffered on behalf of clients")
                .register(registry);
        this.refusals = Counter.builder("syncular.buffers.refusals")
                .description("Requests refused with 429 sync.rate_limited because the buffer budget was spent")
                .register(registry);
    }

    /** The default budget: a quarter of the maximum heap (48 MiB under the chart's {@code -Xmx192m}). */
    public static long defaultLimit(long maxHeapBytes) {
        return Math.max(1, maxHeapBytes / 4);
    }

    public long limit() {
        return limit;
    }

    public long inUse() {
        return inUse.get();
    }

    /**
     * A lease for one request, taken before its body is read; {@code declared} is its declared length (or -1).
     * Throws {@code sync.rate_limited} when the budget is spent or the declared length does not fit what is left.
     * Nothing is reserved: the lease holds only what {@link Lease#grow} adds.
     */
    public Lease open(long declared) {
        long used = inUse.get();
        if (used >= limit || (declared > 0 && declared > limit - used)) {
            throw refused();
        }
        return new Lease(true);
    }

    /**
     * A lease that counts nothing: for a body that is spooled to a file as it arrives rather than held (a blob
     * upload), or a socket round refused before its first byte. Never refused.
     */
    public Lease unmetered() {
        return new Lease(false);
    }

    /**
     * Counts {@code bytes} that exist already (a planned response's frames: they are always counted); answers whether
     * the pod stays within its budget with them. Given back with {@link #give}.
     */
    public boolean take(long bytes) {
        return inUse.addAndGet(bytes) <= limit;
    }

    /**
     * A lease holding {@code bytes} that exist already (a planned response while it is written), counted whatever
     * the budget has left: never refused. Released by {@link Lease#release} once they are written.
     */
    public Lease hold(long bytes) {
        Lease lease = new Lease(true);
        if (bytes > 0) {
            take(bytes);
            lease.held.addAndGet(bytes);
        }
        return lease;
    }

    /** Gives back bytes counted by {@link #take}. */
    public void give(long bytes) {
        if (bytes > 0) {
            inUse.addAndGet(-bytes);
        }
    }

    /** The refusal, counted. */
    SyncError refused() {
        refusals.increment();
        return new SyncError(
                ErrorCode.RATE_LIMITED,
                "the server is busy; retry later",
                Map.of("reason", "memory_budget", "retryAfterMs", RETRY_AFTER_MS));
    }

    /**
     * The bytes one request holds against the budget. Grown and shrunk from any thread (atomics: a gzip body grows it
     * from the event loop for its raw bytes and from a worker for the inflated ones); released once.
     */
    public final class Lease {
        private final AtomicLong held = new AtomicLong();
        private final boolean metered;
        private volatile boolean released;

        private Lease(boolean metered) {
            this.metered = metered;
        }

        /**
         * Adds {@code bytes} about to be buffered; throws {@code sync.rate_limited} (and holds nothing more) when
         * they do not fit. After {@link #release}, and for an {@link #unmetered} lease, it counts nothing.
         */
        public void grow(long bytes) {
            if (bytes <= 0 || released || !metered) {
                return;
            }
            while (true) {
                long used = inUse.get();
                if (used + bytes > limit) {
                    throw refused();
                }
                if (inUse.compareAndSet(used, used + bytes)) {
                    break;
                }
            }
            held.addAndGet(bytes);
            if (released) {
                // released concurrently: give back what was just added
                inUse.addAndGet(-held.getAndSet(0));
            }
        }

        /** Gives back {@code bytes} the request no longer holds (at most what it holds). */
        public void shrink(long bytes) {
            if (bytes <= 0) {
                return;
            }
            long back;
            while (true) {
                long h = held.get();
                back = Math.min(h, bytes);
                if (held.compareAndSet(h, h - back)) {
                    break;
                }
            }
            inUse.addAndGet(-back);
        }

        /** What this lease holds now. */
        public long held() {
            return held.get();
        }

        /** Gives everything back; idempotent. */
        public void release() {
            released = true;
            inUse.addAndGet(-held.getAndSet(0));
        }
    }
}
