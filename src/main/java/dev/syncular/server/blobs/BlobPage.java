package dev.syncular.server.blobs;

import java.util.List;

/**
 * One page of {@link BlobStore#listCreatedBefore}: the matching blobs among the entries scanned, and the
 * store-specific cursor to continue after ({@code null} when the scan reached the end). A page may be empty
 * while {@code next} is not.
 */
public record BlobPage(List<BlobKey> blobs, String next) {
    public BlobPage {
        blobs = List.copyOf(blobs);
    }
}
