package dev.syncular.server.blobs;

import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import java.util.NoSuchElementException;
import java.util.Objects;

/**
 * Durable, content-addressed, partition-scoped blob bytes (§5.9.2). Unlike segments, blobs never expire by
 * time: the only deleter is the orphan sweep ({@code sync.BlobService#sweepOrphans}), which deletes only blobs the
 * reference index (§5.9.4) does not name. Stored bytes are verbatim (never re-compressed), so a presigned GET
 * serves exactly the content-addressed bytes.
 *
 * <p>Every method is non-blocking; absent blobs are {@code null} items, not failures (a {@link #read} of an
 * absent blob fails its stream).
 */
public interface BlobStore {

    /**
     * Off: the server has no blob store. Nothing is stored, so every upsert referencing a blob is rejected
     * with {@code blob.not_found} (§5.9.6) and the sweep finds nothing.
     */
    BlobStore NONE = new NoBlobStore();

    /**
     * Stores verified bytes under {@code (partition, content.blobId())}, reading them from
     * {@link BlobContent#open} in chunks (never whole in memory). Idempotent: when the blob already
     * exists nothing is rewritten and the stored info — with the original {@code createdAtMs} — is returned.
     *
     * @param mediaType advisory media type to persist, or {@code null}
     * @param nowMs     the upload time recorded for a new blob
     */
    Uni<BlobInfo> put(String partition, BlobContent content, String mediaType, long nowMs);

    /** The stored blob's info, or a {@code null} item when absent. */
    Uni<BlobInfo> describe(String partition, String blobId);

    /** Whether the blob is stored (the §5.9.6 push existence check). */
    default Uni<Boolean> has(String partition, String blobId) {
        return describe(partition, blobId).map(Objects::nonNull);
    }

    /**
     * The stored bytes as a stream of chunks of at most {@link #READ_CHUNK_BYTES} bytes, in order, read as the
     * subscriber asks for them — never the whole blob in memory. Fails with {@link NoSuchElementException}
     * when the blob is absent.
     */
    Multi<byte[]> read(String partition, String blobId);

    /** The largest chunk {@link #read} emits (and the embedded store's storage chunk). */
    int READ_CHUNK_BYTES = 1024 * 1024;

    /** Deletes the blob; {@code true} when it existed (or the store cannot tell). */
    Uni<Boolean> delete(String partition, String blobId);

    /**
     * Scans at most {@code limit} stored blobs (of every partition) after the cursor {@code after}
     * ({@code null} = from the start; else a {@link BlobPage#next} of this store) in the store's own order and
     * returns those uploaded before {@code cutoffMs} — the orphan sweep's candidates.
     */
    Uni<BlobPage> listCreatedBefore(long cutoffMs, String after, int limit);

    /** Whether {@link #presignGet}/{@link #presignPut} are available (a delegated-presign object store). */
    default boolean canPresign() {
        return false;
    }

    /** A presigned GET of exactly this blob's object (§5.9.5 always-issue). */
    default Uni<PresignedUrl> presignGet(String partition, String blobId, long nowMs) {
        return Uni.createFrom().failure(new UnsupportedOperationException("this blob store cannot presign"));
    }

    /**
     * A presigned single PUT of this blob's object (§5.9.3 upload grant), bound to {@code byteLength} bytes
     * (the signed {@code Content-Length}).
     */
    default Uni<PresignedUrl> presignPut(String partition, String blobId, long byteLength, long nowMs) {
        return Uni.createFrom().failure(new UnsupportedOperationException("this blob store cannot presign"));
    }
}
