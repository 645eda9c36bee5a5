package dev.syncular.server.operations;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link WatchRuns}' shares (issue 45): the pod's slots, at most {@code slotsPerPartition} of one partition, and the
 * partitions' waiting runs started in turn — a quiet tenant's rerun starts before the rest of a loud tenant's queue.
 */
class WatchRunsTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    private final List<String> started = Collections.synchronizedList(new ArrayList<>());

    /** A run named {@code name} that records its start and ends when {@code end} completes. */
    private CompletableFuture<Object> submit(
            WatchRuns runs, String partition, String name, CompletableFuture<Void> end) {
        return runs.submit(partition, () -> {
                    started.add(name);
                    return Uni.createFrom().completionStage(end).replaceWith((OperationValue)
                            OperationValue.Null.INSTANCE);
                })
                .subscribeAsCompletionStage()
                .thenApply(v -> (Object) v);
    }

    private void awaitStarted(int n) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (started.size() < n) {
            assertTrue(System.nanoTime() < deadline, "started: " + started);
            Thread.onSpinWait();
        }
    }

    @Test
    void aQuietPartitionsRunStartsBeforeTheRestOfALoudPartitionsQueue() throws Exception {
        WatchRuns runs = new WatchRuns(2, 1);
        List<CompletableFuture<Void>> loudEnds = new ArrayList<>();
        List<CompletableFuture<Object>> all = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            CompletableFuture<Void> end = new CompletableFuture<>();
            loudEnds.add(end);
            all.add(submit(runs, "loud", "loud-" + i, end));
        }
        awaitStarted(1);
        assertEquals(List.of("loud-0"), started, "one run of a partition at a time, the other slot stays free");
        assertEquals(4, runs.backlog());
        CompletableFuture<Void> quietEnd = new CompletableFuture<>();
        all.add(submit(runs, "quiet", "quiet-0", quietEnd));
        awaitStarted(2);
        assertEquals("quiet-0", started.get(1), "the quiet tenant's run takes the free slot at once");
        quietEnd.complete(null);
        for (int i = 0; i < 5; i++) {
            loudEnds.get(i).complete(null);
            awaitStarted(3 + Math.min(i, 3));
        }
        for (CompletableFuture<Object> f : all) {
            f.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        }
        assertEquals(List.of("loud-0", "quiet-0", "loud-1", "loud-2", "loud-3", "loud-4"), started);
        assertEquals(0, runs.backlog());
    }

    @Test
    void waitingPartitionsTakeFreeSlotsInTurn() throws Exception {
        WatchRuns runs = new WatchRuns(1, 1);
        CompletableFuture<Void> first = new CompletableFuture<>();
        List<CompletableFuture<Object>> all = new ArrayList<>();
        all.add(submit(runs, "a", "a-0", first));
        awaitStarted(1);
        CompletableFuture<Void> done = CompletableFuture.completedFuture(null);
        all.add(submit(runs, "a", "a-1", done));
        all.add(submit(runs, "a", "a-2", done));
        all.add(submit(runs, "b", "b-0", done));
        all.add(submit(runs, "c", "c-0", done));
        first.complete(null);
        for (CompletableFuture<Object> f : all) {
            f.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        }
        assertEquals(List.of("a-0", "a-1", "b-0", "c-0", "a-2"), started);
    }

    /**
     * A waiting run whose subscriber cancels (its connection closed) leaves the queue at once: the backlog gauge no
     * longer counts it, and it never starts, while the runs behind it do.
     */
    @Test
    void aCancelledWaitingRunLeavesTheQueue() throws Exception {
        WatchRuns runs = new WatchRuns(1, 1);
        CompletableFuture<Void> first = new CompletableFuture<>();
        CompletableFuture<Object> a0 = submit(runs, "a", "a-0", first);
        awaitStarted(1);
        CompletableFuture<Void> done = CompletableFuture.completedFuture(null);
        Cancellable gone = runs.submit("a", () -> {
                    started.add("gone");
                    return Uni.createFrom().item((OperationValue) OperationValue.Null.INSTANCE);
                })
                .subscribe()
                .with(v -> {});
        CompletableFuture<Object> b0 = submit(runs, "b", "b-0", done);
        assertEquals(2, runs.backlog());
        gone.cancel();
        assertEquals(1, runs.backlog(), "the cancelled run is no longer waiting");
        first.complete(null);
        a0.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        b0.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertEquals(List.of("a-0", "b-0"), started);
        assertEquals(0, runs.backlog());
    }
}
