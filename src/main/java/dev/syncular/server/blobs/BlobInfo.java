package dev.syncular.server.blobs;

import java.util.Objects;

/**
 * What a store knows about one stored blob: its size, the advisory media type when one was persisted
 * ({@code null} otherwise), and when it was first uploaded — the orphan sweep's clock (§5.9.2), which an
 * idempotent re-upload never resets.
 */
public record BlobInfo(String partition, String blobId, long byteLength, String mediaType, long createdAtMs) {
    public BlobInfo {
        Objects.requireNonNull(partition, "partition");
        Objects.requireNonNull(blobId, "blobId");
    }

    public BlobKey key() {
        return new BlobKey(partition, blobId);
    }
}
