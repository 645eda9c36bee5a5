package dev.syncular.server.blobs;

import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import java.util.List;
import java.util.NoSuchElementException;

/** {@link BlobStore#NONE}: a server without a blob store, where no blob exists and none can be stored. */
final class NoBlobStore implements BlobStore {

    @Override
    public Uni<BlobInfo> put(String partition, BlobContent content, String mediaType, long nowMs) {
        return Uni.createFrom().failure(new UnsupportedOperationException("no blob store is configured"));
    }

    @Override
    public Uni<BlobInfo> describe(String partition, String blobId) {
        return Uni.createFrom().nullItem();
    }

    @Override
    public Multi<byte[]> read(String partition, String blobId) {
        return Multi.createFrom().failure(new NoSuchElementException("no blob store is configured"));
    }

    @Override
    public Uni<Boolean> delete(String partition, String blobId) {
        return Uni.createFrom().item(false);
    }

    @Override
    public Uni<BlobPage> listCreatedBefore(long cutoffMs, String after, int limit) {
        return Uni.createFrom().item(new BlobPage(List.of(), null));
    }
}
