package dev.syncular.server.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.helpers.test.UniAssertSubscriber;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link RoundAdmission}'s rules, on rounds the test holds open and ends itself: each limit refuses with
 * {@code sync.rate_limited} naming it (and {@code retryAfterMs}) without running the round, places are per actor
 * within its partition, a lone round of any size is admitted, and a place is given back when its round completes,
 * fails or is cancelled.
 */
class RoundAdmissionTest {
    private final List<String> refusals = new ArrayList<>();
    private final AtomicInteger inFlight = new AtomicInteger();

    private RoundAdmission admission(int perActor, int perPartition, long operations) {
        return admission(perActor, perPartition, operations, 0);
    }

    private RoundAdmission admission(int perActor, int perPartition, long operations, int perPod) {
        return new RoundAdmission(
                new RoundAdmission.Limits(perActor, perPartition, operations, perPod, Duration.ofMillis(1500)),
                new RoundAdmission.Listener() {
                    @Override
                    public void admitted() {
                        inFlight.incrementAndGet();
                    }

                    @Override
                    public void released() {
                        inFlight.decrementAndGet();
                    }

                    @Override
                    public void refused(String limit) {
                        refusals.add(limit);
                    }
                });
    }

    /** A round held open until {@link #end} completes it. */
    private static final class Held {
        final CompletableFuture<String> end = new CompletableFuture<>();
        final UniAssertSubscriber<String> sub;

        Held(RoundAdmission a, String partition, String actor, int ops) {
            sub = a.admit(partition, actor, ops, () -> Uni.createFrom().completionStage(end))
                    .subscribe()
                    .withSubscriber(UniAssertSubscriber.create());
        }
    }

    private static String refusedWith(RoundAdmission a, String partition, String actor, int ops) {
        boolean[] ran = {false};
        Throwable f = a.admit(partition, actor, ops, () -> {
                    ran[0] = true;
                    return Uni.createFrom().item("ran");
                })
                .subscribe()
                .withSubscriber(UniAssertSubscriber.create())
                .assertFailed()
                .getFailure();
        assertTrue(!ran[0], "a refused round never runs");
        SyncError e = assertInstanceOf(SyncError.class, f);
        assertEquals(ErrorCode.RATE_LIMITED, e.code());
        assertEquals(1500L, ((Number) e.details().get("retryAfterMs")).longValue());
        return (String) e.details().get("reason");
    }

    private static String admitted(RoundAdmission a, String partition, String actor, int ops) {
        return a.admit(partition, actor, ops, () -> Uni.createFrom().item("ran"))
                .subscribe()
                .withSubscriber(UniAssertSubscriber.create())
                .assertCompleted()
                .getItem();
    }

    @Test
    void perActorRoundsWithinItsPartition() {
        RoundAdmission a = admission(2, 0, 0);
        Held one = new Held(a, "p", "alice", 1);
        Held two = new Held(a, "p", "alice", 1);
        assertEquals(RoundAdmission.ACTOR_ROUNDS, refusedWith(a, "p", "alice", 1));
        assertEquals("ran", admitted(a, "p", "bob", 1), "another actor keeps its places");
        assertEquals("ran", admitted(a, "q", "alice", 1), "the same id in another partition is another actor");
        one.end.complete("done");
        one.sub.assertCompleted();
        assertEquals("ran", admitted(a, "p", "alice", 1), "a completed round gave its place back");
        two.end.completeExceptionally(new IllegalStateException("round failed"));
        two.sub.assertFailed();
        assertEquals(0, inFlight.get());
        assertEquals(List.of(RoundAdmission.ACTOR_ROUNDS), refusals);
    }

    @Test
    void perPartitionRoundsOfEveryActor() {
        RoundAdmission a = admission(0, 2, 0);
        Held one = new Held(a, "p", "alice", 1);
        Held two = new Held(a, "p", "bob", 1);
        assertEquals(RoundAdmission.PARTITION_ROUNDS, refusedWith(a, "p", "carol", 1));
        assertEquals("ran", admitted(a, "q", "carol", 1));
        one.sub.cancel(); // a cancelled round (the client went away) gives its place back too
        assertEquals("ran", admitted(a, "p", "carol", 1));
        two.end.complete("done");
        assertEquals(0, inFlight.get());
    }

    @Test
    void operationsPerActorButALoneRoundOfAnySize() {
        RoundAdmission a = admission(0, 0, 500);
        Held big = new Held(a, "p", "alice", 2000); // alone: admitted whatever its size
        assertEquals(RoundAdmission.ACTOR_OPERATIONS, refusedWith(a, "p", "alice", 1));
        big.end.complete("done");
        Held first = new Held(a, "p", "alice", 300);
        Held second = new Held(a, "p", "alice", 200);
        assertEquals(RoundAdmission.ACTOR_OPERATIONS, refusedWith(a, "p", "alice", 1));
        second.end.complete("done");
        assertEquals("ran", admitted(a, "p", "alice", 200));
        first.end.complete("done");
        assertEquals(0, inFlight.get());
    }

    /** Issue 44: rounds in flight on the pod, every partition and actor together, refused past the cap. */
    @Test
    void podRoundsOfEveryPartition() {
        RoundAdmission a = admission(0, 0, 0, 3);
        Held one = new Held(a, "p", "alice", 1);
        Held two = new Held(a, "q", "bob", 1);
        Held three = new Held(a, "r", "carol", 1);
        assertEquals(RoundAdmission.POD_ROUNDS, refusedWith(a, "s", "dave", 1));
        one.end.complete("done");
        assertEquals("ran", admitted(a, "s", "dave", 1), "a finished round gave its place back");
        two.sub.cancel();
        three.end.completeExceptionally(new IllegalStateException("round failed"));
        for (int i = 0; i < 3; i++) {
            new Held(a, "t", "erin" + i, 1);
        }
        assertEquals(RoundAdmission.POD_ROUNDS, refusedWith(a, "u", "frank", 1), "exactly three places again");
        assertEquals(List.of(RoundAdmission.POD_ROUNDS, RoundAdmission.POD_ROUNDS), refusals);
    }

    @Test
    void noLimitsAdmitsEverything() {
        RoundAdmission a = admission(0, 0, 0);
        for (int i = 0; i < 100; i++) {
            new Held(a, "p", "alice", 1000);
        }
        assertEquals("ran", admitted(a, "p", "alice", 1000));
        assertNull(refusals.isEmpty() ? null : refusals);
    }
}
