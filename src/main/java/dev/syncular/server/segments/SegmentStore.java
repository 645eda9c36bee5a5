package dev.syncular.server.segments;

import dev.syncular.server.wire.MediaType;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

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

    /**
     * {@link #publish} for bytes in a file (large SQLite images, §5.3): stores that can stream a file (S3)
     * override this; the default reads the file on a worker thread.
     */
    default Uni<Void> publishFile(String segmentId, Path file, SegmentPublication publication) {
        return Uni.createFrom()
                .item(() -> {
                    try {
                        return Files.readAllBytes(file);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                })
                .runSubscriptionOn(Infrastructure.getDefaultWorkerPool())
                .flatMap(bytes -> publish(segmentId, bytes, publication));
    }

    /**
     * The whole-table reuse lookup of §5.3: an unexpired publication ({@code expiresAtMs > nowMs}) of
     * exactly {@code key}'s context with both row cursors absent, whose bytes are still stored; a
     * {@code null} item when none. Digests are never unioned across contexts.
     */
    Uni<Match> find(ReuseKey key, long nowMs);

    /** The context of a whole-table segment (§5.3 reuse key): one table at one pin for one scope digest. */
    record ReuseKey(
            String partition,
            String logEpoch,
            String table,
            int schemaVersion,
            MediaType mediaType,
            String scopeDigest,
            long asOfCommitSeq) {
        public boolean matches(SegmentPublication p) {
            return p.rowCursor() == null
                    && p.nextRowCursor() == null
                    && partition.equals(p.partition())
                    && logEpoch.equals(p.logEpoch())
                    && table.equals(p.table())
                    && schemaVersion == p.schemaVersion()
                    && mediaType == p.mediaType()
                    && scopeDigest.equals(p.scopeDigest())
                    && asOfCommitSeq == p.asOfCommitSeq();
        }

        public static ReuseKey of(SegmentPublication p) {
            return new ReuseKey(
                    p.partition(),
                    p.logEpoch(),
                    p.table(),
                    p.schemaVersion(),
                    p.mediaType(),
                    p.scopeDigest(),
                    p.asOfCommitSeq());
        }
    }

    /** A {@link #find} hit: the segment, its length and the matching publication. */
    record Match(String segmentId, long byteLength, SegmentPublication publication) {}

    /**
     * The largest segment this store takes. Stores that hold a segment in memory to write or serve it (the
     * embedded PostgreSQL store) cap it; larger SQLite images are not built and those bootstraps stay on the
     * paged rows lane.
     */
    default long maxSegmentBytes() {
        return Long.MAX_VALUE;
    }

    /** The stored entry with all its publications, or a {@code null} item when unknown. */
    Uni<StoredSegment> describe(String segmentId);

    /** The stored bytes, or a {@code null} item when unknown. */
    Uni<byte[]> read(String segmentId);

    /** Forgets entries whose every publication expired before {@code nowMs}; returns how many. */
    Uni<Integer> deleteExpired(long nowMs);

    /** What the store holds, publications counted live when they expire after {@code nowMs} (operator tooling). */
    Uni<SegmentStoreStats> stats(long nowMs);
}
