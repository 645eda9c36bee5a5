package dev.syncular.server.blobs;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.Map;
import java.util.function.Function;

/**
 * Blob bytes whose content address was verified (§5.9.3: the server recomputes SHA-256 and compares it with
 * the claimed {@code blobId}). The only way into a {@link BlobStore}: a store never holds bytes under an id
 * they do not hash to. The bytes are either in memory (small blobs, tests) or spooled to a file by the upload
 * route as they arrived ({@link #spooled}) — an upload is never whole in the heap; a store reads them through
 * {@link #open} in chunks. An array is handed over, not copied; a spooled file stays its creator's (it deletes
 * the file once the store took the bytes).
 */
public final class BlobContent {
    private final String blobId;
    private final byte[] bytes;
    private final Path file;
    private final long byteLength;

    private BlobContent(String blobId, byte[] bytes, Path file, long byteLength) {
        this.blobId = blobId;
        this.bytes = bytes;
        this.file = file;
        this.byteLength = byteLength;
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
        requireMatch(blobId, sha256);
        return new BlobContent(blobId, bytes, null, bytes.length);
    }

    /**
     * Bytes spooled to {@code file} as they arrived: {@code sha256} must be the digest of exactly the file's
     * {@code byteLength} bytes. Fails with {@code blob.hash_mismatch} when it does not match {@code blobId}.
     */
    public static BlobContent spooled(String blobId, Path file, long byteLength, byte[] sha256) {
        requireMatch(blobId, sha256);
        return new BlobContent(blobId, null, file, byteLength);
    }

    private static void requireMatch(String blobId, byte[] sha256) {
        if (!BlobIds.isValid(blobId)) {
            throw new IllegalArgumentException("malformed blobId");
        }
        if (!MessageDigest.isEqual(
                BlobIds.of(sha256).getBytes(StandardCharsets.US_ASCII), blobId.getBytes(StandardCharsets.US_ASCII))) {
            throw new SyncError(
                    ErrorCode.BLOB_HASH_MISMATCH,
                    "uploaded bytes do not hash to the blob id",
                    Map.of("blobId", blobId));
        }
    }

    public String blobId() {
        return blobId;
    }

    public long byteLength() {
        return byteLength;
    }

    /**
     * The bytes where they are, for a store that sends them without blocking (an asynchronous client): {@code
     * inMemory} of the array, or {@code spooled} of the file holding exactly {@link #byteLength} bytes.
     */
    public <T> T source(Function<byte[], T> inMemory, Function<Path, T> spooled) {
        return bytes != null ? inMemory.apply(bytes) : spooled.apply(file);
    }

    /** A fresh stream over the bytes, from the start (blocking for a spooled file: call it on a worker thread). */
    public InputStream open() throws IOException {
        return bytes != null ? new ByteArrayInputStream(bytes) : Files.newInputStream(file);
    }
}
