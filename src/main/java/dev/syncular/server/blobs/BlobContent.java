package dev.syncular.server.blobs;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import java.security.MessageDigest;
import java.util.Map;

/**
 * Blob bytes whose content address was verified (§5.9.3: the server recomputes SHA-256 and compares it with
 * the claimed {@code blobId}). The only way into a {@link BlobStore}: a store never holds bytes under an id
 * they do not hash to. The array is handed over, not copied; callers must not change it afterwards.
 */
public final class BlobContent {
    private final String blobId;
    private final byte[] bytes;

    private BlobContent(String blobId, byte[] bytes) {
        this.blobId = blobId;
        this.bytes = bytes;
    }

    /** Hashes {@code bytes}; fails with {@code blob.hash_mismatch} when they do not hash to {@code blobId}. */
    public static BlobContent verify(String blobId, byte[] bytes) {
        return verified(blobId, bytes, BlobIds.newDigest().digest(bytes));
    }

    /**
     * For a caller that hashed the bytes while receiving them: {@code sha256} must be the digest of exactly
     * {@code bytes}. Fails with {@code blob.hash_mismatch} when it does not match {@code blobId}.
     */
    public static BlobContent verified(String blobId, byte[] bytes, byte[] sha256) {
        if (!BlobIds.isValid(blobId)) {
            throw new IllegalArgumentException("malformed blobId");
        }
        if (!MessageDigest.isEqual(BlobIds.of(sha256).getBytes(java.nio.charset.StandardCharsets.US_ASCII),
                blobId.getBytes(java.nio.charset.StandardCharsets.US_ASCII))) {
            throw new SyncError(ErrorCode.BLOB_HASH_MISMATCH, "uploaded bytes do not hash to the blob id",
                    Map.of("blobId", blobId));
        }
        return new BlobContent(blobId, bytes);
    }

    public String blobId() {
        return blobId;
    }

    public byte[] bytes() {
        return bytes;
    }

    public long byteLength() {
        return bytes.length;
    }
}
