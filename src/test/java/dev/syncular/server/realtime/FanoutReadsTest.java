package dev.syncular.server.realtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Test;

/** The pod's bound on realtime fan-out reads (§8.2 reads of notified commits): slots, arrival order, backlog. */
class FanoutReadsTest {

    @Test
    void atMostInFlightRunAndTheOthersStartOldestFirst() throws Exception {
        FanoutReads reads = new FanoutReads(2, 10);
        List<CompletableFuture<Integer>> pending = new ArrayList<>();
        List<Integer> started = new ArrayList<>();
        List<CompletableFuture<Integer>> answers = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            int n = i;
            answers.add(reads.submit(() -> {
                started.add(n);
                CompletableFuture<Integer> f = new CompletableFuture<>();
                pending.add(f);
                return f;
            }));
        }
        assertEquals(List.of(0, 1), started, "two slots");
        assertEquals(4, reads.backlog());
        pending.get(1).complete(1);
        assertEquals(List.of(0, 1, 2), started, "a freed slot goes to the oldest waiting read");
        pending.get(0).complete(0);
        pending.get(2).complete(2);
        assertEquals(List.of(0, 1, 2, 3, 4), started);
        pending.get(3).complete(3);
        pending.get(4).complete(4);
        pending.get(5).complete(5);
        for (int i = 0; i < 6; i++) {
            assertEquals(i, answers.get(i).get());
        }
        assertEquals(0, reads.backlog());
        assertEquals(0, reads.running());
    }

    @Test
    void aFullBacklogRefusesAtOnceAndAFailedReadFreesItsSlot() throws Exception {
        FanoutReads reads = new FanoutReads(1, 1);
        CompletableFuture<String> first = new CompletableFuture<>();
        CompletableFuture<String> a = reads.submit(() -> first);
        CompletableFuture<String> b = reads.submit(() -> CompletableFuture.completedFuture("b"));
        CompletableFuture<String> refused = reads.submit(() -> CompletableFuture.completedFuture("c"));
        ExecutionException e = Assertions.assertThrows(ExecutionException.class, refused::get);
        assertInstanceOf(FanoutReads.BacklogFull.class, e.getCause());
        assertFalse(b.isDone(), "waits for the slot");
        first.completeExceptionally(new IllegalStateException("read failed"));
        assertTrue(a.isCompletedExceptionally());
        assertEquals("b", b.get(), "the failed read released its slot");
        assertEquals(0, reads.running());
    }

    /** Reads that complete (or fail) at once hand their slots on in a loop: a 100,000-deep backlog does not deepen the stack. */
    @Test
    void aLongBacklogOfImmediateCompletionsDoesNotRecurse() throws Exception {
        int n = 100_000;
        FanoutReads reads = new FanoutReads(1, n);
        CompletableFuture<Void> gate = new CompletableFuture<>();
        CompletableFuture<Void> held = reads.submit(() -> gate);
        AtomicInteger done = new AtomicInteger();
        List<CompletableFuture<Integer>> all = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int v = i;
            all.add(reads.submit(() -> i(v)));
        }
        all.forEach(f -> f.whenComplete((v, e) -> done.incrementAndGet()));
        // on a thread with the chart's stack size (-Xss512k)
        Thread t = new Thread(null, () -> gate.complete(null), "release", 512 * 1024);
        t.start();
        t.join();
        held.get();
        assertEquals(n, done.get());
        assertEquals(n - 2, all.get(n - 2).get());
        assertTrue(all.get(n - 1).isCompletedExceptionally());
        assertEquals(0, reads.running());
    }

    private static CompletableFuture<Integer> i(int v) {
        return v % 2 == 0
                ? CompletableFuture.completedFuture(v)
                : CompletableFuture.<Integer>failedFuture(new IllegalStateException("read failed at once"));
    }
}
