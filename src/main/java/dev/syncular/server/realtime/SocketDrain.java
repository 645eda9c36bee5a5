package dev.syncular.server.realtime;

import io.quarkus.websockets.next.CloseReason;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jboss.logging.Logger;

/**
 * The socket part of a drain (docs/REALTIME.md "Drain and Kubernetes"): every open socket is sent its 1001
 * close at once — the closes run concurrently on the sockets' event loops — and the drain waits for them
 * together, never past its deadline, so 10,000 sockets (some of whose clients may never answer a close) take
 * about as long as the slowest one, bounded by {@code syncular.realtime.shutdown-grace}, instead of one
 * bounded wait after the other.
 */
final class SocketDrain {
    private static final Logger LOG = Logger.getLogger(SocketDrain.class);
    static final int GOING_AWAY = 1001;
    static final String REASON = "server shutting down";

    private SocketDrain() {}

    /**
     * The part of {@code grace} kept for the closes after in-flight rounds had their time: a quarter of it, at
     * most 2 s.
     */
    static long closeReserveNanos(Duration grace) {
        return Math.min(grace.toNanos() / 4, TimeUnit.SECONDS.toNanos(2));
    }

    /** Closes every session's socket with 1001; waits until they are closed or {@code deadlineNanos} passed. */
    static void closeAll(Iterable<Set<RealtimeSession>> sessions, long deadlineNanos, RealtimeFailures failures) {
        long start = System.nanoTime();
        List<CompletableFuture<Void>> closing = new ArrayList<>();
        for (Set<RealtimeSession> set : sessions) {
            for (RealtimeSession s : set) {
                try {
                    closing.add(s.connection()
                            .close(new CloseReason(GOING_AWAY, REASON))
                            .subscribeAsCompletionStage()
                            .exceptionally(e -> {
                                failures.report(RealtimeFailures.Kind.CLOSE, e, s.connection());
                                return null;
                            }));
                } catch (RuntimeException e) {
                    failures.report(RealtimeFailures.Kind.CLOSE, e, s.connection());
                }
            }
        }
        long unconfirmed = 0;
        try {
            CompletableFuture.allOf(closing.toArray(CompletableFuture[]::new))
                    .get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            unconfirmed = closing.stream().filter(f -> !f.isDone()).count();
        } catch (ExecutionException e) {
            // each close recovers its own failure; nothing reaches here
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            unconfirmed = closing.stream().filter(f -> !f.isDone()).count();
        }
        LOG.infof(
                "Drain: sent 1001 to %d realtime socket(s) in %d ms; %d not confirmed by the deadline",
                closing.size(), TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), unconfirmed);
    }
}
