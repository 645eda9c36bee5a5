package dev.syncular.server.realtime;

import java.util.function.LongSupplier;

/**
 * §8.5 silence as the idle reaper judges it: a socket not heard from (any frame, a pong too) for three heartbeat
 * intervals is closed. Two rules keep a live client from being reaped for the pod's own trouble:
 *
 * <ul>
 *   <li>silence is measured on the monotonic clock ({@link #MONOTONIC_MS}), so a step of the pod's wall clock
 *       (NTP, a VM resumed) ages no socket;
 *   <li>a heartbeat tick that comes more than half an interval late follows a stall of the pod itself (a long
 *       garbage collection, a starved CPU): the frames its clients sent meanwhile may still wait unread, so that
 *       tick pings and closes nothing; the pongs are read before the next tick judges.
 *   <li>a socket whose round is in flight is not judged at all ({@link RealtimeSession#idleAt}): the client waits
 *       for the pod, whose event loop may be too busy to read its pongs.
 * </ul>
 *
 * One per timer; {@link #tick} is called from that timer only.
 */
final class SilenceWatch {
    /** The pod's monotonic clock in milliseconds: what {@code heard} times are read on. */
    static final LongSupplier MONOTONIC_MS = () -> System.nanoTime() / 1_000_000;

    private final long intervalMs;
    private final LongSupplier clockMs;
    private long lastTickMs = Long.MIN_VALUE;

    SilenceWatch(long intervalMs, LongSupplier clockMs) {
        this.intervalMs = intervalMs;
        this.clockMs = clockMs;
    }

    /** The verdict of one heartbeat tick: its time, and whether it may close silent sockets. */
    record Tick(long nowMs, boolean mayReap) {}

    /** A heartbeat tick now. */
    Tick tick() {
        long now = clockMs.getAsLong();
        boolean onTime = lastTickMs == Long.MIN_VALUE || now - lastTickMs <= intervalMs + intervalMs / 2;
        lastTickMs = now;
        return new Tick(now, onTime);
    }

    /** Whether a socket last heard at {@code heardMs} (on {@link #MONOTONIC_MS}) is to be closed at {@code tick}. */
    boolean silent(Tick tick, long heardMs) {
        return tick.mayReap() && tick.nowMs() - heardMs > idleMs();
    }

    /** Three intervals: how long a socket or a pod may be silent. */
    long idleMs() {
        return 3 * intervalMs;
    }
}
