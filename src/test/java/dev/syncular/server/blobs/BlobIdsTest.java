package dev.syncular.server.blobs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** §5.9.1 content addresses ({@link BlobIds}) and the §5.9.3 upload check ({@link BlobContent}). */
class BlobIdsTest {
    /** SHA-256 of "hello", the digest every implementation agrees on. */
    static final String HELLO = "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";

    @Test
    void aBlobIdIsSha256AndSixtyFourLowercaseHexDigits() {
        assertEquals(HELLO, BlobIds.compute("hello".getBytes(StandardCharsets.UTF_8)));
        assertTrue(BlobIds.isValid(HELLO));
        assertEquals(HELLO.substring("sha256:".length()), BlobIds.hex(HELLO));
        assertFalse(BlobIds.isValid(HELLO.toUpperCase()), "uppercase hex is another id (§5.9.1: lowercase)");
        assertFalse(BlobIds.isValid("SHA256:" + BlobIds.hex(HELLO)), "the prefix is exact");
        assertFalse(BlobIds.isValid(HELLO.substring(0, HELLO.length() - 1)), "63 digits");
        assertFalse(BlobIds.isValid(HELLO + "0"), "65 digits");
        assertFalse(BlobIds.isValid(HELLO.replace('c', 'g')), "not hex");
        assertFalse(BlobIds.isValid(null));
        assertFalse(BlobIds.isValid(""));
    }

    @Test
    void uploadedBytesMustHashToTheirId() {
        byte[] hello = "hello".getBytes(StandardCharsets.UTF_8);
        BlobContent ok = BlobContent.verify(HELLO, hello);
        assertEquals(5, ok.byteLength());
        assertEquals(HELLO, ok.blobId());
        SyncError e = assertThrows(
                SyncError.class, () -> BlobContent.verify(HELLO, "hellO".getBytes(StandardCharsets.UTF_8)));
        assertEquals(ErrorCode.BLOB_HASH_MISMATCH, e.code());
        assertThrows(IllegalArgumentException.class, () -> BlobContent.verify("sha256:abc", hello));
    }

    @Test
    void spooledBytesAreReadBackFromTheirFile(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("spool");
        byte[] hello = "hello".getBytes(StandardCharsets.UTF_8);
        Files.write(file, hello);
        BlobContent spooled = BlobContent.spooled(
                HELLO, file, hello.length, BlobIds.newDigest().digest(hello));
        try (InputStream in = spooled.open()) {
            assertArrayEquals(hello, in.readAllBytes());
        }
        assertEquals("file", spooled.source(bytes -> "memory", path -> "file"));
    }
}
