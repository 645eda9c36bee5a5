package dev.syncular.server.segments.s3;

import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Publishers and sweeps of one entry in this process take turns without holding a thread: a chain of futures per
 * lock stripe (fewer lost conditional writes to retry); across processes the conditional record writes alone keep
 * every publication.
 */
final class EntryTurns {
    /** One turn per lock stripe: the tail of each stripe's chain, completed (never failed) when its turn ends. */
    private final CompletableFuture<?>[] turns;

    EntryTurns() {
        CompletableFuture<?>[] t = new CompletableFuture<?>[64];
        Arrays.fill(t, S3Objects.DONE);
        this.turns = t;
    }

    /** Runs {@code work} once the entry's stripe is free; the stripe is free again when its future completes. */
    <T> CompletableFuture<T> inTurn(String segmentId, Supplier<CompletableFuture<T>> work) {
        int stripe = Math.floorMod(segmentId.hashCode(), turns.length);
        CompletableFuture<Void> released = new CompletableFuture<>();
        CompletableFuture<?> previous;
        synchronized (turns) {
            previous = turns[stripe];
            turns[stripe] = released;
        }
        return previous.thenCompose(v -> work.get()).whenComplete((r, e) -> released.complete(null));
    }
}
