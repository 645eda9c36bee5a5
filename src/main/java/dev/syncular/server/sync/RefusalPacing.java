package dev.syncular.server.sync;

import io.smallrye.mutiny.Uni;

/**
 * How long a round the admission refused ({@link RoundAdmission}, §10.2 {@code sync.rate_limited}) is held before its
 * answer goes out (issue 45): a client that retries at once, ignoring {@code Retry-After}, then waits anyway, so a
 * tenant looping on refusals costs the pod one timer per refusal instead of a round's decoding and admission
 * thousands of times a second. The hold is taken from the refusal's wait: the answer's {@code retryAfterMs} is what
 * is left of it, so a client that honours it waits no longer than before. {@link #OFF}: answered at once.
 */
public interface RefusalPacing {
    /** Every refusal answered at once. */
    RefusalPacing OFF = new RefusalPacing() {
        @Override
        public long holdMs(long retryAfterMs, long pushedBytes) {
            return 0;
        }

        @Override
        public Uni<Void> hold(long ms) {
            return Uni.createFrom().voidItem();
        }
    };

    /**
     * How long to hold a refusal whose wait is {@code retryAfterMs}, of a round whose pushes carry {@code pushedBytes}
     * (its request stays counted against the pod's buffer budget while held): at most the wait, {@code 0} to answer at
     * once (off, a large request, or too many refusals held already).
     */
    long holdMs(long retryAfterMs, long pushedBytes);

    /** Completes after {@code ms} (a {@link #holdMs} result), on the caller's context. */
    Uni<Void> hold(long ms);
}
