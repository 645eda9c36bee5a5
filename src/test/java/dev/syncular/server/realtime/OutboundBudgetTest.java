package dev.syncular.server.realtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The outbound budget's accounting (§8.7 "Backpressure"): a round's response in flight is the response the client
 * asked for, bounded by the response cap, so it never makes a control message unbearable — a wake-up interleaves
 * with a stream of any size (the own push's {@code catchup-required} closed the socket 4290 when it met more than
 * twice the budget of round chunks the transport had not taken yet) — while unsolicited bytes keep their bound.
 * The writes are transports that have not completed: what the budget counts is what it was handed.
 */
class OutboundBudgetTest {
    private static final long BUDGET = 1_000;

    private final Vertx vertx = Vertx.vertx();
    private final RealtimeMetrics metrics = new RealtimeMetrics(new SimpleMeterRegistry(), () -> 0, () -> 0, () -> 0);
    // the connection is only closed by a stuck deadline or closeStuck, neither of which these cases reach
    private final OutboundBudget budget =
            new OutboundBudget(null, () -> {}, vertx, BUDGET, Duration.ofMinutes(1), metrics);
    private final List<Cancellable> inFlight = new ArrayList<>();

    /** A write the transport never completes within the test: its bytes stay counted. */
    private static Uni<Void> stuckWrite() {
        return Uni.createFrom().nothing();
    }

    @Test
    void aRoundsResponseInFlightLeavesControlMessagesBearable() {
        for (int i = 0; i < 10; i++) { // ten times the budget of a round's chunks not yet written
            inFlight.add(budget.tracked(stuckWrite(), BUDGET).subscribe().with(v -> {}));
        }
        assertEquals(10 * BUDGET, budget.pending());
        assertTrue(budget.bearable(200), "a wake-up interleaves with the round's stream (§8.7)");
        assertFalse(budget.fits(200), "no delta is squeezed in while that much waits");
        vertx.close();
    }

    @Test
    void unsolicitedBytesKeepTheirBoundBesideAStream() {
        inFlight.add(budget.tracked(stuckWrite(), 5 * BUDGET).subscribe().with(v -> {}));
        budget.send(stuckWrite(), 2 * BUDGET - 100, e -> {});
        assertTrue(budget.bearable(100), "up to twice the budget of control messages and deltas");
        assertFalse(budget.bearable(101), "past twice the budget: the connection cannot be kept exact");
        inFlight.forEach(Cancellable::cancel);
        assertEquals(2 * BUDGET - 100, budget.pending(), "a cancelled stream write stops counting");
        vertx.close();
    }
}
