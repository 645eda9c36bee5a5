package dev.syncular.server.operations;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The pod's watch runs (REMOTE.md §6): at most {@code slots} execute at once, so a commit touching many watches asks
 * the pool for a bounded number of connections, and at most {@code slotsPerPartition} of one partition (issue 45).
 * Waiting runs are queued per partition, oldest first, and the partitions take the free slots in turn: a tenant whose
 * commits rerun a thousand watches waits behind its own runs, while another tenant's run starts after at most one run
 * of each other partition. A run is subscribed on a worker thread (scope resolution and authorizers may block), never
 * on the event loop that heard the commit. A waiting run whose subscriber cancels (its connection closed) leaves the
 * queue at once: it takes no turn and is no longer counted as waiting.
 */
final class WatchRuns {
    private final int slots;
    private final int slotsPerPartition;
    /** Waiting runs by partition, in the order the partitions take turns (guarded by this). */
    private final LinkedHashMap<String, ArrayDeque<Runnable>> waiting = new LinkedHashMap<>();
    /** Running runs by partition (an entry only while non-zero; guarded by this). */
    private final Map<String, Integer> running = new HashMap<>();

    private int runningTotal;
    private int queued;

    WatchRuns(int slots, int slotsPerPartition) {
        this.slots = slots;
        this.slotsPerPartition = slotsPerPartition;
    }

    /** {@code work} of {@code partition} once a slot is free for it. */
    Uni<OperationValue> submit(String partition, Supplier<Uni<OperationValue>> work) {
        return Uni.createFrom().emitter(em -> {
            Runnable run = () -> Uni.createFrom()
                    .<OperationValue>deferred(work::get)
                    .runSubscriptionOn(Infrastructure.getDefaultWorkerPool())
                    .subscribe()
                    .with(
                            v -> {
                                release(partition);
                                em.complete(v);
                            },
                            e -> {
                                release(partition);
                                em.fail(e);
                            });
            synchronized (this) {
                waiting.computeIfAbsent(partition, p -> new ArrayDeque<>()).add(run);
                queued++;
            }
            em.onTermination(() -> withdraw(partition, run)); // a no-op once the run has started
            drain();
        });
    }

    /** {@code run} of {@code partition} leaves the queue if it is still waiting (its subscriber cancelled). */
    private synchronized void withdraw(String partition, Runnable run) {
        ArrayDeque<Runnable> queue = waiting.get(partition);
        if (queue != null && queue.remove(run)) {
            queued--;
            if (queue.isEmpty()) {
                waiting.remove(partition);
            }
        }
    }

    /** Runs waiting to start. */
    synchronized int backlog() {
        return queued;
    }

    private void release(String partition) {
        synchronized (this) {
            runningTotal--;
            running.computeIfPresent(partition, (k, n) -> n <= 1 ? null : n - 1);
        }
        drain();
    }

    /** Starts waiting runs while slots are free, the partitions in turn; started outside the lock. */
    private void drain() {
        while (true) {
            Runnable next = null;
            synchronized (this) {
                if (runningTotal >= slots) {
                    return;
                }
                for (Iterator<Map.Entry<String, ArrayDeque<Runnable>>> it =
                                waiting.entrySet().iterator();
                        it.hasNext(); ) {
                    Map.Entry<String, ArrayDeque<Runnable>> e = it.next();
                    String partition = e.getKey();
                    if (running.getOrDefault(partition, 0) >= slotsPerPartition) {
                        continue;
                    }
                    next = e.getValue().poll();
                    it.remove();
                    if (!e.getValue().isEmpty()) {
                        waiting.put(partition, e.getValue()); // its turn taken: to the back of the line
                    }
                    running.merge(partition, 1, Integer::sum);
                    runningTotal++;
                    queued--;
                    break;
                }
                if (next == null) {
                    return;
                }
            }
            next.run();
        }
    }
}
