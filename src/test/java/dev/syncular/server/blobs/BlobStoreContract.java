package dev.syncular.server.blobs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import io.smallrye.mutiny.Uni;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The {@link BlobStore} contract (§5.9.2): verified, content-addressed, partition-scoped, durable bytes with
 * idempotent re-upload and the sweep listing. Subclasses supply a store over an empty, isolated backing store
 * (once per test class); every test works in its own partitions.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class BlobStoreContract {
    protected static final Duration TIMEOUT = Duration.ofSeconds(30);
    protected BlobStore store;

    protected abstract BlobStore createStore();

    @BeforeAll
    void setUpStore() {
        store = createStore();
    }

    protected static <T> T await(Uni<T> uni) {
        return uni.await().atMost(TIMEOUT);
    }

    protected static byte[] randomBytes(int size) {
        byte[] b = new byte[size];
        new Random(UUID.randomUUID().getLeastSignificantBits()).nextBytes(b);
        return b;
    }

    protected static String partition() {
        return "p-" + UUID.randomUUID();
    }

    /** The stored bytes gathered from {@link BlobStore#read}'s chunks, or {@code null} when the blob is absent. */
    protected byte[] readAll(String partition, String blobId) {
        try {
            return store.read(partition, blobId)
                    .collect()
                    .in(ByteArrayOutputStream::new, ByteArrayOutputStream::writeBytes)
                    .await()
                    .atMost(TIMEOUT)
                    .toByteArray();
        } catch (NoSuchElementException e) {
            return null;
        }
    }

    /** Every blob of {@code partition} the sweep listing yields for {@code cutoffMs}, paging {@code limit} at a time. */
    protected List<String> listed(String partition, long cutoffMs, int limit) {
        List<String> out = new ArrayList<>();
        String cursor = null;
        int pages = 0;
        do {
            BlobPage page = await(store.listCreatedBefore(cutoffMs, cursor, limit));
            assertTrue(page.blobs().size() <= limit);
            for (BlobKey k : page.blobs()) {
                if (k.partition().equals(partition)) {
                    out.add(k.blobId());
                }
            }
            cursor = page.next();
            assertTrue(++pages < 10_000, "listing terminates");
        } while (cursor != null);
        return out;
    }

    @Test
    void putThenDescribeReadAndHas() {
        String p = partition();
        byte[] bytes = randomBytes(5000);
        BlobContent content = BlobContent.verify(BlobIds.compute(bytes), bytes);
        BlobInfo stored = await(store.put(p, content, "image/png", 1_700_000_000_000L));
        assertEquals(new BlobInfo(p, content.blobId(), 5000, "image/png", 1_700_000_000_000L), stored);
        assertEquals(stored, await(store.describe(p, content.blobId())));
        assertTrue(await(store.has(p, content.blobId())));
        assertArrayEquals(bytes, readAll(p, content.blobId()));
    }

    @Test
    void emptyBlobAndNoMediaType() {
        String p = partition();
        BlobContent empty = BlobContent.verify(BlobIds.compute(new byte[0]), new byte[0]);
        await(store.put(p, empty, null, 42_000L));
        BlobInfo info = await(store.describe(p, empty.blobId()));
        assertEquals(0, info.byteLength());
        assertNull(info.mediaType());
        assertEquals(42_000L, info.createdAtMs());
        assertArrayEquals(new byte[0], readAll(p, empty.blobId()));
    }

    @Test
    void absentBlobsAreNullItems() {
        String p = partition();
        String id = BlobIds.compute(randomBytes(10));
        assertNull(await(store.describe(p, id)));
        assertFalse(await(store.has(p, id)));
        assertNull(readAll(p, id));
    }

    @Test
    void reUploadIsIdempotentAndKeepsTheFirstUpload() {
        String p = partition();
        byte[] bytes = randomBytes(300);
        String id = BlobIds.compute(bytes);
        await(store.put(p, BlobContent.verify(id, bytes), "text/plain", 1_000L));
        BlobInfo again = await(store.put(p, BlobContent.verify(id, bytes.clone()), "application/pdf", 9_000L));
        assertEquals(new BlobInfo(p, id, 300, "text/plain", 1_000L), again);
        assertEquals(again, await(store.describe(p, id)));
        assertArrayEquals(bytes, readAll(p, id));
    }

    @Test
    void blobsArePartitionScoped() {
        String p1 = partition();
        String p2 = partition();
        byte[] bytes = randomBytes(64);
        String id = BlobIds.compute(bytes);
        await(store.put(p1, BlobContent.verify(id, bytes), null, 1L));
        assertFalse(await(store.has(p2, id)));
        assertNull(readAll(p2, id));
        await(store.put(p2, BlobContent.verify(id, bytes), null, 2L));
        await(store.delete(p1, id));
        assertFalse(await(store.has(p1, id)));
        assertEquals(2L, await(store.describe(p2, id)).createdAtMs());
    }

    @Test
    void partitionIdsNeedNoParticularAlphabet() {
        String p = "tenant/with spaces/ü/%2F/" + UUID.randomUUID();
        String other = "tenant/with spaces/ü/%2F";
        byte[] bytes = randomBytes(33);
        String id = BlobIds.compute(bytes);
        await(store.put(p, BlobContent.verify(id, bytes), null, 5L));
        assertTrue(await(store.has(p, id)));
        assertFalse(await(store.has(other, id)));
        assertEquals(List.of(id), listed(p, Long.MAX_VALUE, 100));
    }

    @Test
    void deleteRemovesAndIsSafeOnAbsentBlobs() {
        String p = partition();
        byte[] bytes = randomBytes(128);
        String id = BlobIds.compute(bytes);
        await(store.put(p, BlobContent.verify(id, bytes), null, 1L));
        await(store.delete(p, id));
        assertNull(await(store.describe(p, id)));
        assertNull(readAll(p, id));
        await(store.delete(p, id));
        // a deleted blob can be uploaded again, with a new upload time
        await(store.put(p, BlobContent.verify(id, bytes), null, 7L));
        assertEquals(7L, await(store.describe(p, id)).createdAtMs());
    }

    /**
     * A blob of several storage chunks, spooled to a file as an upload is: read back as a stream of chunks of at
     * most {@link BlobStore#READ_CHUNK_BYTES}, in order, the last one partial, with the same SHA-256; a reader that
     * takes only the first chunk gets just that much.
     */
    @Test
    void largeSpooledBlobStreamsBothWaysInChunks() throws IOException {
        String p = partition();
        int size = 5 * BlobStore.READ_CHUNK_BYTES + 12_345;
        byte[] bytes = randomBytes(size);
        String id = BlobIds.compute(bytes);
        Path file = Files.createTempFile("blob-contract-", ".bin");
        try {
            Files.write(file, bytes);
            BlobInfo stored = await(store.put(
                    p, BlobContent.spooled(id, file, size, BlobIds.newDigest().digest(bytes)), "video/mp4", 3L));
            assertEquals(new BlobInfo(p, id, size, "video/mp4", 3L), stored);
        } finally {
            Files.delete(file);
        }
        List<byte[]> chunks = store.read(p, id).collect().asList().await().atMost(TIMEOUT);
        assertTrue(chunks.size() >= 6, "several chunks: " + chunks.size());
        MessageDigest digest = BlobIds.newDigest();
        long total = 0;
        for (byte[] c : chunks) {
            assertTrue(c.length > 0 && c.length <= BlobStore.READ_CHUNK_BYTES, "chunk of " + c.length);
            digest.update(c);
            total += c.length;
        }
        assertEquals(size, total);
        assertEquals(id, BlobIds.of(digest.digest()));
        List<byte[]> first =
                store.read(p, id).select().first().collect().asList().await().atMost(TIMEOUT);
        assertEquals(1, first.size());
        assertArrayEquals(Arrays.copyOf(bytes, first.get(0).length), first.get(0));
    }

    @Test
    void readingAnAbsentBlobFailsItsStream() {
        String id = BlobIds.compute(randomBytes(12));
        assertThrows(
                NoSuchElementException.class,
                () -> store.read(partition(), id).collect().asList().await().atMost(TIMEOUT));
    }

    @Test
    void contentAddressIsVerifiedBeforeAnythingIsStored() {
        byte[] bytes = randomBytes(100);
        String wrong = BlobIds.compute(randomBytes(100));
        SyncError e = assertThrows(SyncError.class, () -> BlobContent.verify(wrong, bytes));
        assertEquals(ErrorCode.BLOB_HASH_MISMATCH, e.code());
        assertEquals(wrong, e.details().get("blobId"));
        assertThrows(IllegalArgumentException.class, () -> BlobContent.verify("sha256:ABC", bytes));
        assertThrows(
                SyncError.class,
                () -> BlobContent.verified(
                        BlobIds.compute(bytes), bytes, BlobIds.newDigest().digest(wrong.getBytes())));
        assertThrows(
                SyncError.class,
                () -> BlobContent.spooled(
                        wrong, Path.of("unused"), 100, BlobIds.newDigest().digest(bytes)));
    }

    @Test
    void sweepListingFiltersByUploadTimeAndPagesOverEverything() {
        long now = System.currentTimeMillis();
        String p = partition();
        Set<String> old = new HashSet<>();
        Set<String> fresh = new HashSet<>();
        for (int i = 0; i < 7; i++) {
            byte[] bytes = randomBytes(20 + i);
            String id = BlobIds.compute(bytes);
            boolean isOld = i % 2 == 0;
            await(store.put(
                    p,
                    BlobContent.verify(id, bytes),
                    null,
                    isOld ? now : now + Duration.ofHours(2).toMillis()));
            (isOld ? old : fresh).add(id);
        }
        long cutoff = now + Duration.ofHours(1).toMillis();
        for (int limit : new int[] {1, 2, 3, 1000}) {
            List<String> got = listed(p, cutoff, limit);
            assertEquals(old.size(), got.size(), "each match once with limit " + limit);
            assertEquals(old, new HashSet<>(got));
        }
        Set<String> all = new HashSet<>(old);
        all.addAll(fresh);
        assertEquals(all, new HashSet<>(listed(p, now + Duration.ofHours(3).toMillis(), 4)));
        assertTrue(listed(p, now - Duration.ofHours(1).toMillis(), 1000).isEmpty());
    }

    @Test
    void presignedUrlsOnlyWhenSupported() {
        String id = BlobIds.compute(randomBytes(8));
        if (!store.canPresign()) {
            assertThrows(UnsupportedOperationException.class, () -> await(store.presignGet("p", id, 0)));
            assertThrows(UnsupportedOperationException.class, () -> await(store.presignPut("p", id, 8, 0)));
        } else {
            long before = System.currentTimeMillis();
            PresignedUrl url = await(store.presignGet("p", id, before));
            assertNotNull(url.url());
            assertTrue(url.expiresAtMs() > before - 1000
                    && url.expiresAtMs() <= before + Duration.ofMinutes(15).toMillis());
        }
    }
}
