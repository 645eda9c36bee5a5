package dev.syncular.server.round;

import dev.syncular.server.errors.SyncError;
import dev.syncular.server.memory.BufferBudget;
import java.util.function.LongFunction;
import java.util.function.Supplier;

/**
 * The bytes of one request as they arrive, in whatever framing brings them (an HTTP body's chunks, a socket
 * round's {@code 0x01} payloads, §8.7; a sync round's through its {@link RequestIntake}): counted against the
 * route's cap and, while they are held, against the pod's {@link BufferBudget}. The one place the per-route byte
 * limits are applied while a body arrives.
 *
 * <p>{@link #take} checks the cap first ({@code tooLarge} once more than {@code cap} bytes arrived), then grows
 * the lease ({@code sync.rate_limited} when the budget cannot hold them). Once {@link #release}d it still counts
 * and caps, but holds nothing: a socket round refused by the budget is read to its end and answered there.
 * Counted by one thread at a time (the request's event loop); its lease, which is thread-safe, may also be grown by
 * the worker inflating a gzip body.
 */
public final class BodyIntake {
    private final long cap;
    private final Supplier<? extends RuntimeException> tooLarge;
    private final BufferBudget.Lease lease;
    private long received;

    public BodyIntake(long cap, Supplier<? extends RuntimeException> tooLarge, BufferBudget.Lease lease) {
        this.cap = cap;
        this.tooLarge = tooLarge;
        this.lease = lease;
    }

    /**
     * The intake of a request declaring {@code declared} bytes ({@code Content-Length}; -1 when it declares none),
     * decided before any byte is read: {@code tooLarge} when it declares more than {@code cap}, else the lease
     * {@code lease} gives for the declared length (the pod's buffer budget answers {@code sync.rate_limited} when it
     * is spent or the declared length does not fit).
     */
    public static BodyIntake declared(
            long declared,
            long cap,
            Supplier<? extends RuntimeException> tooLarge,
            LongFunction<BufferBudget.Lease> lease) {
        if (declared > cap) {
            throw tooLarge.get();
        }
        return new BodyIntake(cap, tooLarge, lease.apply(declared));
    }

    /**
     * Counts {@code bytes} that just arrived: throws {@code tooLarge} past the cap, the budget's
     * {@link SyncError} ({@code sync.rate_limited}) when they cannot be held.
     */
    public void take(long bytes) {
        received += bytes;
        if (received > cap) {
            throw tooLarge.get();
        }
        lease.grow(bytes);
    }

    /** The bytes received so far. */
    public long received() {
        return received;
    }

    /** The request's share of the buffer budget: grown for bytes derived from the body (inflated bytes). */
    public BufferBudget.Lease lease() {
        return lease;
    }

    /** Gives the held bytes back to the budget; idempotent. */
    public void release() {
        lease.release();
    }
}
