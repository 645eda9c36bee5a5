package dev.syncular.server.sync;

/**
 * A fault seam of the §2.3 idempotency lookup, for the conformance host's {@code idempotency-fault} capability:
 * when {@link #failNow()} answers {@code true} the push treats the lookup as unreadable and answers §6.3
 * {@code sync.idempotency_cache_miss} (retryable, not persisted, nothing applied). Production uses {@link #NONE}.
 */
@FunctionalInterface
public interface IdempotencyLookupFault {
    IdempotencyLookupFault NONE = () -> false;

    /** Whether this lookup fails; consumes a one-shot fault. */
    boolean failNow();
}
