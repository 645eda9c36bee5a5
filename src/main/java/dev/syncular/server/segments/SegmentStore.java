package dev.syncular.server.segments;

import io.smallrye.mutiny.Uni;

/**
 * Storage of bootstrap segments (§5): immutable bytes under their content address
 * ({@code "sha256:" + hex(sha256(bytes))}, §5.1) plus the mutable record of their publications.
 */
public interface SegmentStore {
    /**
     * Stores {@code bytes} under {@code segmentId} (computed by the caller over the uncompressed bytes) and
     * records {@code publication}: a publication whose context already exists merges into that
     * publication's lifetime (its expiry extends), a new context is appended. Bytes already stored under
     * the id must be identical — a mismatch fails with {@link SegmentCollisionException} and overwrites
     * nothing.
     */
    Uni<Void> publish(String segmentId, byte[] bytes, SegmentPublication publication);

    /** The stored entry with all its publications, or a {@code null} item when unknown. */
    Uni<StoredSegment> describe(String segmentId);

    /** The stored bytes, or a {@code null} item when unknown. */
    Uni<byte[]> read(String segmentId);

    /** Forgets entries whose every publication expired before {@code nowMs}; returns how many. */
    Uni<Integer> deleteExpired(long nowMs);
}
