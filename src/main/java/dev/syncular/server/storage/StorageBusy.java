package dev.syncular.server.storage;

/**
 * Which failures of the storage are transient refusals the same request may retry ({@link StorageException#BUSY}):
 * the storage implementation knows its own (a lock or statement timeout, a deadlock, a full or timed-out connection
 * pool, a full push queue, the database going away under a failover). The bindings answer them 429
 * {@code sync.rate_limited} with {@code Retry-After} (§10.2 "host adapter errors": the mapping hook); the composition
 * root provides the one of the storage it builds.
 */
@FunctionalInterface
public interface StorageBusy {

    /**
     * {@code failure} (or what it wraps) as a {@link StorageException#BUSY} refusal with {@code details.reason} and
     * {@code details.retryAfterMs}; {@code null} when it is not a transient storage failure.
     */
    StorageException busy(Throwable failure);
}
