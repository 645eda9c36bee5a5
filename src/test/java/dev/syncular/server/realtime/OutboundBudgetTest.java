package dev.syncular.server.realtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;
import io.smallrye.mutiny.subscription.UniEmitter;
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
            new OutboundBudget(null, () -> {}, vertx, BUDGET, Duration.ofMinutes(1), metrics, unbounded());
    private final List<Cancellable> inFlight = new ArrayList<>();

    private static SocketBudget unbounded() {
        return new SocketBudget(SocketBudget.OFF, new SimpleMeterRegistry());
    }

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

    /**
     * The pod's socket memory ({@code syncular.realtime.socket-budget}) bounds what each connection's own budget does
     * not: one socket's unwritten bytes leave another no room for a delta, though that one has nothing pending; a
     * write that completes gives the room back. Every open socket holds a fixed share of it.
     */
    @Test
    void thePodsSocketBudgetBoundsEveryConnectionsDeltas() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        SocketBudget pod = new SocketBudget(2 * SocketBudget.SOCKET_BYTES + 2_000, registry);
        pod.socketOpened();
        pod.socketOpened();
        assertFalse(pod.admitsSocket(), "2,000 bytes are no room for a third socket");
        OutboundBudget a = new OutboundBudget(null, () -> {}, vertx, BUDGET, Duration.ofMinutes(1), metrics, pod);
        OutboundBudget b = new OutboundBudget(null, () -> {}, vertx, BUDGET, Duration.ofMinutes(1), metrics, pod);
        List<UniEmitter<? super Void>> write = new ArrayList<>();
        a.send(Uni.createFrom().<Void>emitter(em -> write.add(em)), 1_900, e -> {});
        assertTrue(b.fits(100), "100 bytes fit beside a's 1,900");
        assertFalse(b.fits(101), "b has nothing pending, but the pod has no room for 101 bytes");
        assertEquals(2 * SocketBudget.SOCKET_BYTES + 1_900, pod.inUse());
        assertEquals(
                pod.inUse(),
                registry.get("syncular.realtime.socket.bytes").gauge().value());
        write.get(0).complete(null);
        assertTrue(b.fits(1_000), "the written bytes gave their room back");
        pod.socketClosed();
        pod.socketClosed();
        assertTrue(pod.admitsSocket(), "closed sockets give their shares back");
        vertx.close();
    }

    /**
     * Sockets fill at most three quarters of the pod's budget; the rest is kept for their outbound bytes, so a pod
     * with every socket place taken still has room for deltas.
     */
    @Test
    void aQuarterOfThePodsSocketBudgetIsKeptForOutboundBytes() {
        SocketBudget pod = new SocketBudget(4 * SocketBudget.SOCKET_BYTES, new SimpleMeterRegistry());
        for (int i = 0; i < 3; i++) {
            assertTrue(pod.admitsSocket(), "socket " + (i + 1) + " of the three in three quarters");
            pod.socketOpened();
        }
        assertFalse(pod.admitsSocket(), "a fourth socket would fill the quarter kept for outbound bytes");
        assertTrue(pod.fits(SocketBudget.SOCKET_BYTES), "that quarter still carries deltas");
        assertFalse(pod.fits(SocketBudget.SOCKET_BYTES + 1));
        vertx.close();
    }
}
