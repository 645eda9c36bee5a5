package dev.syncular.server.segments;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.wire.MediaType;
import io.smallrye.mutiny.Uni;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The {@link SegmentStore} contract (§5.1). Subclasses supply a store over an empty, isolated backing store
 * (once per test class). Every test uses its own content addresses; the sweeping tests only ever forget
 * entries whose publications expired, and every other test publishes with expiries no sweep reaches.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class SegmentStoreContract {
    protected static final Duration TIMEOUT = Duration.ofSeconds(30);
    /** Expiry of publications no sweep in this suite reaches. */
    protected static final long FAR = 4_000_000_000_000L;

    protected SegmentStore store;

    /** A store over an empty, isolated backing store (called once per test class). */
    protected abstract SegmentStore createStore();

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

    protected static String idOf(byte[] bytes) {
        try {
            return "sha256:"
                    + HexFormat.of()
                            .formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    protected static SegmentPublication pub(String scopeDigest, long createdAtMs, long expiresAtMs) {
        return new SegmentPublication(
                "p1",
                "epoch-1",
                "tasks",
                1,
                MediaType.ROWS,
                scopeDigest,
                42L,
                null,
                "cursor-2",
                100L,
                createdAtMs,
                expiresAtMs);
    }

    private static SegmentPublication withExpiry(SegmentPublication p, long expiresAtMs) {
        return new SegmentPublication(
                p.partition(),
                p.logEpoch(),
                p.table(),
                p.schemaVersion(),
                p.mediaType(),
                p.scopeDigest(),
                p.asOfCommitSeq(),
                p.rowCursor(),
                p.nextRowCursor(),
                p.rowCount(),
                p.createdAtMs(),
                expiresAtMs);
    }

    @Test
    void publishThenDescribeAndReadRoundTrip() {
        byte[] bytes = randomBytes(3000);
        String id = idOf(bytes);
        SegmentPublication p = new SegmentPublication(
                "part-a", "epoch-x", "notes", 7, MediaType.SQLITE, "sd-1", 9L, "c1", null, 12L, 1_000L, FAR);
        await(store.publish(id, bytes, p));

        StoredSegment s = await(store.describe(id));
        assertNotNull(s);
        assertEquals(id, s.segmentId());
        assertEquals(3000L, s.byteLength());
        assertEquals(List.of(p), s.publications());
        assertArrayEquals(bytes, await(store.read(id)));

        byte[] empty = new byte[0];
        String emptyId = idOf(empty);
        await(store.publish(emptyId, empty, pub("sd-empty", 1L, FAR)));
        assertArrayEquals(empty, await(store.read(emptyId)));
        assertEquals(0L, await(store.describe(emptyId)).byteLength());
    }

    @Test
    void sameContextExtendsExpiryNeverShortensNorDuplicates() {
        byte[] bytes = randomBytes(500);
        String id = idOf(bytes);
        SegmentPublication first = pub("sd", 1_000L, FAR);
        await(store.publish(id, bytes, first));
        // same context, later creation, longer expiry: merges into the existing lifetime
        await(store.publish(id, bytes.clone(), pub("sd", 2_000L, FAR + 5_000L)));
        StoredSegment s = await(store.describe(id));
        assertEquals(1, s.publications().size());
        assertEquals(withExpiry(first, FAR + 5_000L), s.publications().get(0));

        // a shorter expiry never shortens it
        await(store.publish(id, bytes, pub("sd", 3_000L, FAR + 1_000L)));
        s = await(store.describe(id));
        assertEquals(List.of(withExpiry(first, FAR + 5_000L)), s.publications());
        assertArrayEquals(bytes, await(store.read(id)));
    }

    @Test
    void secondContextAppendsAndLeavesTheFirstUntouched() {
        byte[] bytes = randomBytes(800);
        String id = idOf(bytes);
        SegmentPublication a = pub("sd-a", 1_000L, FAR);
        SegmentPublication b = pub("sd-b", 2_000L, FAR + 9_000L);
        SegmentPublication otherPartition = new SegmentPublication(
                "p2", "epoch-1", "tasks", 1, MediaType.ROWS, "sd-a", 42L, null, "cursor-2", 100L, 2_500L, FAR + 9_000L);
        // null vs "" cursors are different contexts
        SegmentPublication emptyCursor = new SegmentPublication(
                "p1", "epoch-1", "tasks", 1, MediaType.ROWS, "sd-a", 42L, "", "cursor-2", 100L, 3_000L, FAR + 9_000L);
        SegmentPublication otherEpoch = new SegmentPublication(
                "p1", "epoch-2", "tasks", 1, MediaType.ROWS, "sd-a", 42L, null, "cursor-2", 100L, 3_500L, FAR + 9_000L);
        await(store.publish(id, bytes, a));
        await(store.publish(id, bytes, b));
        await(store.publish(id, bytes, otherPartition));
        await(store.publish(id, bytes, emptyCursor));
        await(store.publish(id, bytes, otherEpoch));

        StoredSegment s = await(store.describe(id));
        assertEquals(Set.of(a, b, otherPartition, emptyCursor, otherEpoch), Set.copyOf(s.publications()));
        assertEquals(5, s.publications().size());
        assertEquals(800L, s.byteLength());
    }

    @Test
    void differentBytesUnderAnExistingIdCollideAndChangeNothing() {
        byte[] bytes = randomBytes(1200);
        String id = idOf(bytes);
        SegmentPublication a = pub("sd", 1_000L, FAR);
        await(store.publish(id, bytes, a));

        byte[] other = bytes.clone();
        other[600] ^= 1;
        SegmentPublication b = pub("sd-other", 2_000L, FAR + 1L);
        assertCollision(store.publish(id, other, b));
        // same context too: must not extend the existing publication
        assertCollision(store.publish(id, other, withExpiry(a, FAR + 100L)));
        // different length
        assertCollision(store.publish(id, randomBytes(10), b));

        assertArrayEquals(bytes, await(store.read(id)));
        StoredSegment s = await(store.describe(id));
        assertEquals(1200L, s.byteLength());
        assertEquals(List.of(a), s.publications());
    }

    private static void assertCollision(Uni<Void> uni) {
        Throwable thrown = assertThrows(Throwable.class, () -> await(uni));
        Throwable t = thrown;
        while (!(t instanceof SegmentCollisionException) && t.getCause() != null) {
            t = t.getCause();
        }
        assertTrue(t instanceof SegmentCollisionException, () -> "expected a collision, got " + thrown);
    }

    private static SegmentPublication wholeTable(
            String partition, String digest, long asOf, long createdAtMs, long expiresAtMs) {
        return new SegmentPublication(
                partition,
                "epoch-1",
                "tasks",
                1,
                MediaType.SQLITE,
                digest,
                asOf,
                null,
                null,
                77L,
                createdAtMs,
                expiresAtMs);
    }

    @Test
    void findSelectsTheUnexpiredWholeTablePublicationOfExactlyTheReuseKey() {
        String partition = "find-" + UUID.randomUUID();
        byte[] bytes = randomBytes(700);
        String id = idOf(bytes);
        SegmentPublication p = wholeTable(partition, "sd-a", 10L, 1_000L, 50_000L);
        await(store.publish(id, bytes, p));
        SegmentStore.ReuseKey key = SegmentStore.ReuseKey.of(p);

        SegmentStore.Match hit = await(store.find(key, 49_999L));
        assertNotNull(hit);
        assertEquals(id, hit.segmentId());
        assertEquals(700L, hit.byteLength());
        assertEquals(p, hit.publication());
        // expired at the boundary
        assertNull(await(store.find(key, 50_000L)));
        // every other component of the key misses: never unioned across contexts
        assertNull(await(store.find(
                new SegmentStore.ReuseKey(partition, "epoch-1", "tasks", 1, MediaType.SQLITE, "sd-b", 10L), 2_000L)));
        assertNull(await(store.find(
                new SegmentStore.ReuseKey(partition + "x", "epoch-1", "tasks", 1, MediaType.SQLITE, "sd-a", 10L),
                2_000L)));
        assertNull(await(store.find(
                new SegmentStore.ReuseKey(partition, "epoch-2", "tasks", 1, MediaType.SQLITE, "sd-a", 10L), 2_000L)));
        assertNull(await(store.find(
                new SegmentStore.ReuseKey(partition, "epoch-1", "tasks", 2, MediaType.SQLITE, "sd-a", 10L), 2_000L)));
        assertNull(await(store.find(
                new SegmentStore.ReuseKey(partition, "epoch-1", "tasks", 1, MediaType.ROWS, "sd-a", 10L), 2_000L)));
        assertNull(await(store.find(
                new SegmentStore.ReuseKey(partition, "epoch-1", "tasks", 1, MediaType.SQLITE, "sd-a", 11L), 2_000L)));

        // a paged publication of the same context is not whole-table
        byte[] paged = randomBytes(300);
        await(store.publish(
                idOf(paged),
                paged,
                new SegmentPublication(
                        partition, "epoch-1", "notes", 1, MediaType.ROWS, "sd-a", 10L, null, "c1", 5L, 1L, FAR)));
        assertNull(await(store.find(
                new SegmentStore.ReuseKey(partition, "epoch-1", "notes", 1, MediaType.ROWS, "sd-a", 10L), 2_000L)));

        // a refreshed publication of the same key is found again with its new expiry
        await(store.publish(id, bytes, wholeTable(partition, "sd-a", 10L, 60_000L, FAR)));
        SegmentStore.Match again = await(store.find(key, 60_000L));
        assertNotNull(again);
        assertEquals(FAR, again.publication().expiresAtMs());
    }

    @Test
    void publishFileStoresTheFileBytes() throws Exception {
        byte[] bytes = randomBytes(200_000);
        Path file = Files.createTempFile("segment", ".bin");
        try {
            Files.write(file, bytes);
            String id = idOf(bytes);
            SegmentPublication p = wholeTable("file-" + UUID.randomUUID(), "sd", 3L, 1L, FAR);
            await(store.publishFile(id, file, p));
            assertArrayEquals(bytes, await(store.read(id)));
            assertEquals(List.of(p), await(store.describe(id)).publications());
            assertEquals(id, await(store.find(SegmentStore.ReuseKey.of(p), 2L)).segmentId());
        } finally {
            Files.deleteIfExists(file);
        }
    }

    @Test
    void statsCountEntriesBytesAndPublications() {
        long now = 2_000_000_000_000L;
        SegmentStoreStats before = await(store.stats(now));
        byte[] bytes = randomBytes(1234);
        String id = idOf(bytes);
        await(store.publish(id, bytes, pub("sd-stats-live", 1_000L, FAR)));
        await(store.publish(id, bytes, pub("sd-stats-expired", 1_000L, now - 1)));
        SegmentStoreStats after = await(store.stats(now));
        assertEquals(before.store(), after.store());
        assertEquals(1, after.segments() - before.segments());
        assertEquals(1234, after.bytes() - before.bytes());
        if (after.publications() >= 0) {
            assertEquals(2, after.publications() - before.publications());
            assertEquals(1, after.livePublications() - before.livePublications());
        } else {
            assertEquals(-1, after.livePublications(), "a store that does not count publications counts neither");
        }
    }

    @Test
    void unknownIdYieldsNullItems() {
        String id = idOf(("never published " + UUID.randomUUID()).getBytes(StandardCharsets.UTF_8));
        assertNull(await(store.describe(id)));
        assertNull(await(store.read(id)));
    }

    @Test
    void deleteExpiredForgetsFullyExpiredEntriesOnly() {
        long now = 1_000_000L;
        byte[] gone = randomBytes(100);
        byte[] goneToo = randomBytes(100);
        byte[] mixed = randomBytes(100);
        byte[] live = randomBytes(100);
        byte[] boundary = randomBytes(100);
        await(store.publish(idOf(gone), gone, pub("sd", 1L, now - 1)));
        await(store.publish(idOf(goneToo), goneToo, pub("sd-1", 1L, 10L)));
        await(store.publish(idOf(goneToo), goneToo, pub("sd-2", 1L, now - 500)));
        SegmentPublication mixedLive = pub("sd-live", 1L, now + 1_000);
        await(store.publish(idOf(mixed), mixed, pub("sd-dead", 1L, now - 1)));
        await(store.publish(idOf(mixed), mixed, mixedLive));
        SegmentPublication livePub = pub("sd", 1L, now + 60_000);
        await(store.publish(idOf(live), live, livePub));
        SegmentPublication boundaryPub = pub("sd", 1L, now); // expires at now, not before it: kept
        await(store.publish(idOf(boundary), boundary, boundaryPub));

        assertEquals(2, await(store.deleteExpired(now)));

        assertNull(await(store.describe(idOf(gone))));
        assertNull(await(store.read(idOf(gone))));
        assertNull(await(store.describe(idOf(goneToo))));
        assertNull(await(store.read(idOf(goneToo))));
        assertEquals(List.of(mixedLive), await(store.describe(idOf(mixed))).publications());
        assertArrayEquals(mixed, await(store.read(idOf(mixed))));
        assertEquals(List.of(livePub), await(store.describe(idOf(live))).publications());
        assertEquals(List.of(boundaryPub), await(store.describe(idOf(boundary))).publications());

        assertEquals(0, await(store.deleteExpired(now)));
        // a forgotten id can be published afresh
        SegmentPublication again = pub("sd", 5L, now + 10);
        await(store.publish(idOf(gone), gone, again));
        assertEquals(List.of(again), await(store.describe(idOf(gone))).publications());
        assertArrayEquals(gone, await(store.read(idOf(gone))));
    }

    @Test
    void concurrentPublishersOfDistinctContextsAreAllRecorded() {
        byte[] bytes = randomBytes(4096);
        String id = idOf(bytes);
        List<SegmentPublication> pubs = new ArrayList<>();
        List<Uni<Void>> publishes = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            SegmentPublication p = pub("sd-" + i, 1_000L + i, FAR + i);
            pubs.add(p);
            publishes.add(store.publish(id, bytes.clone(), p));
        }
        await(Uni.join().all(publishes).andFailFast());

        StoredSegment s = await(store.describe(id));
        assertEquals(20, s.publications().size());
        assertEquals(Set.copyOf(pubs), Set.copyOf(s.publications()));
        assertArrayEquals(bytes, await(store.read(id)));
    }

    @Test
    void concurrentPublishersOfOneContextMergeToTheLatestExpiry() {
        byte[] bytes = randomBytes(2048);
        String id = idOf(bytes);
        List<Uni<Void>> publishes = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            publishes.add(store.publish(id, bytes, pub("sd", 1_000L, FAR + (i * 7L) % 20)));
        }
        await(Uni.join().all(publishes).andFailFast());

        StoredSegment s = await(store.describe(id));
        assertEquals(
                1,
                s.publications().size(),
                () -> s.publications().stream().map(Object::toString).collect(Collectors.joining("\n")));
        assertEquals(FAR + 19, s.publications().get(0).expiresAtMs());
    }

    @Test
    void publishRacingDeleteExpiredNeverLosesTheNewPublication() {
        long now = 500_000L;
        for (int round = 0; round < 10; round++) {
            byte[] bytes = randomBytes(256);
            String id = idOf(bytes);
            await(store.publish(id, bytes, pub("sd-old", 1L, now - 1)));
            SegmentPublication fresh = pub("sd-new", 2L, FAR);
            await(Uni.join()
                    .all(List.of(store.publish(id, bytes, fresh).replaceWith(0), store.deleteExpired(now)))
                    .andFailFast());
            // whichever ran first, the entry survives with its bytes and the new publication
            StoredSegment s = await(store.describe(id));
            assertNotNull(s, "entry forgotten under a live publication");
            assertTrue(s.publications().contains(fresh), () -> s.publications().toString());
            assertArrayEquals(bytes, await(store.read(id)));
        }
    }
}
