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
                new RoundAdmission.Limits(perActor, perPartition, operations, perPod, 0, 0, Duration.ofMillis(1500)),
                PushRate.OFF,
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
                },
                RefusalPacing.OFF);
    }

    /** A round held open until {@link #end} completes it. */
    private static final class Held {
        final CompletableFuture<String> end = new CompletableFuture<>();
        final UniAssertSubscriber<String> sub;

        Held(RoundAdmission a, String partition, String actor, int ops) {
            sub = a.admit(
                            partition,
                            actor,
                            RoundAdmission.Demand.pushing(ops, 0),
                            () -> Uni.createFrom().completionStage(end))
                    .subscribe()
                    .withSubscriber(UniAssertSubscriber.create());
        }
    }

    private static String refusedWith(RoundAdmission a, String partition, String actor, int ops) {
        boolean[] ran = {false};
        Throwable f = a.admit(partition, actor, RoundAdmission.Demand.pushing(ops, 0), () -> {
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
        return a.admit(
                        partition,
                        actor,
                        RoundAdmission.Demand.pushing(ops, 0),
                        () -> Uni.createFrom().item("ran"))
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

    @Test
    void bootstrappingRoundsHaveTheirOwnPlacesPerPartitionAndPerPod() {
        RoundAdmission a = new RoundAdmission(
                new RoundAdmission.Limits(0, 0, 0, 0, 1, 2, Duration.ofMillis(1500)),
                PushRate.OFF,
                new RoundAdmission.Listener() {},
                RefusalPacing.OFF);
        RoundAdmission.Demand bootstrap = new RoundAdmission.Demand(0, 0, true);
        CompletableFuture<String> end = new CompletableFuture<>();
        UniAssertSubscriber<String> first = a.admit(
                        "p", "x", bootstrap, () -> Uni.createFrom().completionStage(end))
                .subscribe()
                .withSubscriber(UniAssertSubscriber.create());
        assertEquals(RoundAdmission.PARTITION_BOOTSTRAPS, bootstrapRefusal(a, "p", "y"));
        assertEquals("ran", admitted(a, "p", "y", 0), "a round without a bootstrap keeps its place");
        CompletableFuture<String> other = new CompletableFuture<>();
        a.admit("q", "x", bootstrap, () -> Uni.createFrom().completionStage(other))
                .subscribe()
                .withSubscriber(UniAssertSubscriber.create());
        assertEquals(RoundAdmission.POD_BOOTSTRAPS, bootstrapRefusal(a, "r", "x"));
        end.complete("done");
        first.assertCompleted();
        assertNull(bootstrapRefusal(a, "p", "y"), "the partition's place is given back");
        other.complete("done");
    }

    /**
     * Issue 45, {@link RefusalPacing}: a refusal is answered only once its hold ends (the pacing is the test's: it
     * holds every small round for 600 ms and completes when the test says so), its {@code retryAfterMs} is what is left
     * of the wait, and the refused round took no place meanwhile; a round pushing more than the pacing holds is
     * answered at once with its whole wait.
     */
    @Test
    void aRefusalIsHeldAndTellsWhatIsLeftOfItsWait() {
        List<Long> holds = new ArrayList<>();
        CompletableFuture<Void> released = new CompletableFuture<>();
        RefusalPacing pacing = new RefusalPacing() {
            @Override
            public long holdMs(long retryAfterMs, long pushedBytes) {
                return pushedBytes > 100 ? 0 : Math.min(600, retryAfterMs);
            }

            @Override
            public Uni<Void> hold(long ms) {
                holds.add(ms);
                return Uni.createFrom().completionStage(released);
            }
        };
        RoundAdmission a = new RoundAdmission(
                new RoundAdmission.Limits(1, 0, 0, 0, 0, 0, Duration.ofMillis(1500)),
                PushRate.OFF,
                new RoundAdmission.Listener() {},
                pacing);
        CompletableFuture<String> end = new CompletableFuture<>();
        a.admit(
                        "p",
                        "alice",
                        RoundAdmission.Demand.pushing(1, 10),
                        () -> Uni.createFrom().completionStage(end))
                .subscribe()
                .withSubscriber(UniAssertSubscriber.create());
        UniAssertSubscriber<String> held = a.admit(
                        "p",
                        "alice",
                        RoundAdmission.Demand.pushing(1, 10),
                        () -> Uni.createFrom().item("ran"))
                .subscribe()
                .withSubscriber(UniAssertSubscriber.create());
        assertEquals(List.of(600L), holds);
        assertNull(held.getFailure(), "not answered while held");
        UniAssertSubscriber<String> large = a.admit(
                        "p",
                        "alice",
                        RoundAdmission.Demand.pushing(1, 1000),
                        () -> Uni.createFrom().item("ran"))
                .subscribe()
                .withSubscriber(UniAssertSubscriber.create());
        SyncError atOnce = assertInstanceOf(SyncError.class, large.getFailure());
        assertEquals(1500L, atOnce.details().get("retryAfterMs"), "answered at once with its whole wait");
        released.complete(null);
        SyncError refusal = assertInstanceOf(SyncError.class, held.getFailure());
        assertEquals(ErrorCode.RATE_LIMITED, refusal.code());
        assertEquals(RoundAdmission.ACTOR_ROUNDS, refusal.details().get("reason"));
        assertEquals(900L, refusal.details().get("retryAfterMs"), "1,500 ms less the 600 held");
        end.complete("done");
        assertEquals("ran", admitted(a, "p", "alice", 1), "the held refusal took no place");
    }

    /** The reason a bootstrapping round is refused with, or {@code null} when it is admitted (and ends at once). */
    private static String bootstrapRefusal(RoundAdmission a, String partition, String actor) {
        Throwable f = a.admit(
                        partition,
                        actor,
                        new RoundAdmission.Demand(0, 0, true),
                        () -> Uni.createFrom().item("ran"))
                .subscribe()
                .withSubscriber(UniAssertSubscriber.create())
                .getFailure();
        return f == null
                ? null
                : (String) assertInstanceOf(SyncError.class, f).details().get("reason");
    }

    // ------------------------------------------------------------------------------------ push rates (issue 45)

    private final long[] now = {0};

    private RoundAdmission rated(double opsPerPartition, double bytesPerPartition, double opsPerActor) {
        return new RoundAdmission(
                new RoundAdmission.Limits(0, 0, 0, 0, 0, 0, Duration.ofMillis(1500)),
                new PushRate(
                        new PushRate.Limits(opsPerPartition, bytesPerPartition, opsPerActor, 0, Duration.ofSeconds(1)),
                        () -> now[0]),
                new RoundAdmission.Listener() {
                    @Override
                    public void refused(String limit) {
                        refusals.add(limit);
                    }
                },
                RefusalPacing.OFF);
    }

    private static Throwable pushing(RoundAdmission a, String partition, String actor, int ops, long bytes) {
        return a.admit(
                        partition,
                        actor,
                        RoundAdmission.Demand.pushing(ops, bytes),
                        () -> Uni.createFrom().item("ran"))
                .subscribe()
                .withSubscriber(UniAssertSubscriber.create())
                .getFailure();
    }

    @Test
    void aCommitLargerThanTheRateIsAdmittedWholeAndTheDebtIsRepaidBeforeTheNext() {
        RoundAdmission a = rated(0, 0, 100);
        assertNull(pushing(a, "p", "hog", 300, 0), "one commit of any size proceeds");
        SyncError refused = assertInstanceOf(SyncError.class, pushing(a, "p", "hog", 1, 0));
        assertEquals(ErrorCode.RATE_LIMITED, refused.code());
        assertEquals(PushRate.ACTOR_OPERATIONS, refused.details().get("reason"));
        // 200 in debt at 100/s: back above zero after a little more than 2 s
        assertEquals(2010L, refused.details().get("retryAfterMs"));
        assertNull(pushing(a, "p", "mate", 50, 0), "another actor of the partition draws from its own bucket");
        assertNull(pushing(a, "p", "hog", 0, 0), "a round without pushes draws nothing");
        now[0] = Duration.ofMillis(1_999).toNanos();
        assertInstanceOf(SyncError.class, pushing(a, "p", "hog", 1, 0));
        now[0] = Duration.ofMillis(2_011).toNanos();
        assertNull(pushing(a, "p", "hog", 1, 0));
        assertEquals(List.of(PushRate.ACTOR_OPERATIONS, PushRate.ACTOR_OPERATIONS), refusals);
    }

    @Test
    void aPartitionsRatesHoldForEveryActorOfItAndNoOtherPartition() {
        RoundAdmission a = rated(1000, 10_000, 0);
        assertNull(pushing(a, "loud", "a", 10, 25_000));
        SyncError refused = assertInstanceOf(SyncError.class, pushing(a, "loud", "b", 1, 10));
        assertEquals(PushRate.PARTITION_BYTES, refused.details().get("reason"));
        assertNull(pushing(a, "quiet", "a", 10, 9_000));
        assertNull(pushing(a, "loud", "b", 0, 0), "a pull-only round of the indebted partition is served");
        now[0] = Duration.ofSeconds(1).toNanos();
        assertInstanceOf(SyncError.class, pushing(a, "loud", "b", 1, 10), "5,000 bytes of debt are left");
        now[0] = Duration.ofMillis(1_501).toNanos();
        assertNull(pushing(a, "loud", "b", 1, 10));
        // the operations bucket refuses on its own, a bucket refilled never holds more than its burst
        now[0] += Duration.ofSeconds(60).toNanos();
        assertNull(pushing(a, "loud", "a", 1001, 0));
        refused = assertInstanceOf(SyncError.class, pushing(a, "loud", "a", 1, 0));
        assertEquals(PushRate.PARTITION_OPERATIONS, refused.details().get("reason"));
    }
}
