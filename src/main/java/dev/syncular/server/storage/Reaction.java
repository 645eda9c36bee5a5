package dev.syncular.server.storage;

/**
 * A stored durable reaction (§6.9) and its delivery state: {@code pending} (due at {@code dueAtMs}),
 * {@code leased} (a worker holds it until {@code leaseExpiresAtMs}), {@code completed} or {@code dead-letter}.
 * {@code idempotencyKey} is the stable JSON encoding of {@code [partition, clientId, clientCommitId, key]}, the
 * key a handler passes on to external systems. The last failure keeps a stable code and bounded JSON details,
 * never exception text.
 */
public record Reaction(
        long id,
        String partition,
        String clientId,
        String clientCommitId,
        long commitSeq,
        String key,
        String type,
        int version,
        String payloadJson,
        String idempotencyKey,
        String status,
        int attempts,
        int maxAttempts,
        long dueAtMs,
        String leaseOwner,
        Long leaseExpiresAtMs,
        String lastErrorCode,
        String lastErrorDetailsJson,
        Long failedAtMs,
        Long completedAtMs,
        long createdAtMs) {
    public static final String PENDING = "pending";
    public static final String LEASED = "leased";
    public static final String COMPLETED = "completed";
    public static final String DEAD_LETTER = "dead-letter";
}
