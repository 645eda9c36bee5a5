package dev.syncular.server.blobs;

import java.util.Objects;

/** A stored blob's identity: blobs are partition-scoped, so the same bytes in two partitions are two blobs. */
public record BlobKey(String partition, String blobId) {
    public BlobKey {
        Objects.requireNonNull(partition, "partition");
        Objects.requireNonNull(blobId, "blobId");
    }
}
