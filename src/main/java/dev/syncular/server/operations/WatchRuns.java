package dev.syncular.server.operations;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The pod's watch runs (REMOTE.md §6): at most {@code slots} execute at once, the others wait oldest first, so
 * a commit touching many watches asks the pool for a bounded number of connections. A run is subscribed on a
 * worker thread (scope resolution and authorizers may block), never on the event loop that heard the commit.
 */
final class WatchRuns {
    private final int slots;
    private final AtomicInteger running = new AtomicInteger();
    private final ConcurrentLinkedQueue<Runnable> waiting = new ConcurrentLinkedQueue<>();
    private final AtomicInteger queued = new AtomicInteger();

    WatchRuns(int slots) {
        this.slots = slots;
    }

    /** {@code work} once a slot is free. */
    Uni<OperationValue> submit(Supplier<Uni<OperationValue>> work) {
        return Uni.createFrom().emitter(em -> {
            waiting.add(() -> Uni.createFrom()
                    .<OperationValue>deferred(work::get)
                    .runSubscriptionOn(Infrastructure.getDefaultWorkerPool())
                    .subscribe()
                    .with(
                            v -> {
                                release();
                                em.complete(v);
                            },
                            e -> {
                                release();
                                em.fail(e);
                            }));
            queued.incrementAndGet();
            drain();
        });
    }

    /** Runs waiting to start. */
    int backlog() {
        return queued.get();
    }

    private void release() {
        running.decrementAndGet();
        drain();
    }

    private void drain() {
        while (true) {
            int now = running.get();
            if (now >= slots || waiting.isEmpty()) {
                return;
            }
            if (!running.compareAndSet(now, now + 1)) {
                continue;
            }
            Runnable next = waiting.poll();
            if (next == null) {
                running.decrementAndGet();
                if (waiting.isEmpty()) {
                    return;
                }
                continue;
            }
            queued.decrementAndGet();
            next.run();
        }
    }
}
