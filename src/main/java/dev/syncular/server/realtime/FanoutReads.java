package dev.syncular.server.realtime;

import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * The pod's bound on the log reads of its realtime fan-out (§8.2: each notified commit is read once from the log
 * and fanned out). A burst of commits across many partitions would otherwise ask the pool for one read per
 * notified commit at once, and starve the pushes and pulls that share it. At most {@code inFlight} reads run;
 * the others wait in arrival order (oldest first) in a queue of at most {@code maxBacklog} entries. A read past
 * that is refused at once: its partition's sockets are woken with {@code catchup-required} instead (§8.3), and
 * their clients pull what the fan-out skipped, so nothing is lost.
 *
 * <p>Completions run on whichever thread finished the read before; nothing here blocks.
 */
final class FanoutReads {
    /** A read refused because the backlog is full. */
    static final class BacklogFull extends RuntimeException {
        BacklogFull() {
            super("realtime fan-out backlog full", null, false, false);
        }
    }

    private final int inFlight;
    private final int maxBacklog;
    private final ArrayDeque<Runnable> waiting = new ArrayDeque<>();
    private int running;
    /** Releases this thread still owes while it is inside {@link #release()}; {@code -1} when it is not. */
    private final ThreadLocal<int[]> releases = ThreadLocal.withInitial(() -> new int[] {-1});

    FanoutReads(int inFlight, int maxBacklog) {
        if (inFlight < 1 || maxBacklog < 0) {
            throw new IllegalArgumentException("fan-out reads: inFlight >= 1, maxBacklog >= 0");
        }
        this.inFlight = inFlight;
        this.maxBacklog = maxBacklog;
    }

    /** Runs {@code read} when a slot is free; fails with {@link BacklogFull} when the backlog is full. */
    <T> CompletableFuture<T> submit(Supplier<CompletableFuture<T>> read) {
        CompletableFuture<T> result = new CompletableFuture<>();
        Runnable start = () -> {
            CompletableFuture<T> started;
            try {
                started = read.get();
            } catch (RuntimeException e) {
                started = CompletableFuture.failedFuture(e);
            }
            started.whenComplete((v, e) -> {
                release();
                if (e != null) {
                    result.completeExceptionally(e);
                } else {
                    result.complete(v);
                }
            });
        };
        synchronized (this) {
            if (running >= inFlight) {
                if (waiting.size() >= maxBacklog) {
                    return CompletableFuture.failedFuture(new BacklogFull());
                }
                waiting.addLast(start);
                return result;
            }
            running++;
        }
        start.run();
        return result;
    }

    /**
     * A finished read hands its slot to the oldest waiting one. A read that completes at once (a failure before
     * any I/O) would release again from inside {@code next.run()}: such releases are counted and run by the
     * outermost call's loop on this thread, so a long backlog never deepens the stack.
     */
    private void release() {
        int[] pending = releases.get();
        if (pending[0] >= 0) {
            pending[0]++;
            return;
        }
        pending[0] = 1;
        try {
            while (pending[0] > 0) {
                pending[0]--;
                Runnable next;
                synchronized (this) {
                    next = waiting.pollFirst();
                    if (next == null) {
                        running--;
                        continue;
                    }
                }
                next.run();
            }
        } finally {
            pending[0] = -1;
        }
    }

    /** Reads waiting for a slot now. */
    synchronized int backlog() {
        return waiting.size();
    }

    /** Reads running now. */
    synchronized int running() {
        return running;
    }
}
