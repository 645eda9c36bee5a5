package dev.syncular.server.segments.s3;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.segments.SegmentPublication;
import dev.syncular.server.segments.SegmentStore;
import dev.syncular.server.segments.SegmentStoreContract;
import dev.syncular.server.segments.SegmentUrlSigner;
import dev.syncular.server.segments.StoredSegment;
import dev.syncular.server.testsupport.StartsProcesses;
import dev.syncular.server.testsupport.TestS3;
import dev.syncular.server.wire.MediaType;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3AsyncClient;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.presigner.S3Presigner;

/**
 * Runs the {@link SegmentStoreContract} against {@link S3SegmentStore} on a real S3-compatible server that
 * verifies signatures and honours conditional writes ({@link TestS3}, a fresh bucket), plus the S3-only
 * behaviour: the deterministic key layout, the older record shape, and §5.4 presigned URLs.
 */
@StartsProcesses
class S3SegmentStoreTest extends SegmentStoreContract {
    private S3Client s3;
    private S3AsyncClient async;
    private S3Presigner presigner;
    private String bucket;
    private S3SegmentStore s3store;

    @Override
    protected SegmentStore createStore() {
        s3 = TestS3.client();
        async = TestS3.asyncClient();
        presigner = TestS3.presigner();
        bucket = TestS3.newBucket();
        s3store = new S3SegmentStore(async, presigner, bucket, "app/");
        return s3store;
    }

    @AfterAll
    void close() {
        s3.close();
        async.close();
        presigner.close();
    }

    @Test
    void layoutIsDeterministicKeysUnderThePrefix() {
        byte[] bytes = randomBytes(1000);
        String id = idOf(bytes);
        String hex = id.substring("sha256:".length());
        SegmentPublication p = new SegmentPublication(
                "p-layout", "e1", "tasks", 1, MediaType.SQLITE, "sd", 5L, null, null, 3L, 1L, FAR);
        await(store.publish(id, bytes, p));
        assertEquals("app/seg/sha256/" + hex, s3store.objectKey(id));
        assertArrayEquals(
                bytes,
                s3.getObjectAsBytes(r -> r.bucket(bucket).key("app/seg/sha256/" + hex))
                        .asByteArray());
        String record = s3.getObjectAsBytes(r -> r.bucket(bucket).key("app/rec/sha256/" + hex + ".json"))
                .asUtf8String();
        assertTrue(record.contains("\"publications\""), record);
        String findKey = s3store.findKey(SegmentStore.ReuseKey.of(p));
        assertTrue(findKey.startsWith("app/find/") && findKey.endsWith(".json"), findKey);
        assertTrue(s3.getObjectAsBytes(r -> r.bucket(bucket).key(findKey))
                .asUtf8String()
                .contains(id));
    }

    @Test
    void aPublisherThatLosesTheConditionalWriteReReadsAndMerges() {
        // two processes on one bucket: B's publication lands between A's read and A's write
        S3SegmentStore other = new S3SegmentStore(async, presigner, bucket, "app/");
        byte[] bytes = randomBytes(900);
        String id = idOf(bytes);
        SegmentPublication first = pub("sd-first", 1L, FAR);
        SegmentPublication racing = pub("sd-racing", 2L, FAR);
        SegmentPublication late = pub("sd-late", 3L, FAR);
        await(store.publish(id, bytes, first));
        s3store.upload.beforeRecordWrite = () -> await(other.publish(id, bytes, racing));
        await(store.publish(id, bytes, late));
        assertEquals(List.of(first, racing, late), await(store.describe(id)).publications());

        // the same race on a brand-new entry (If-None-Match: * loses)
        byte[] fresh = randomBytes(901);
        String freshId = idOf(fresh);
        s3store.upload.beforeRecordWrite = () -> await(other.publish(freshId, fresh, racing));
        await(store.publish(freshId, fresh, late));
        assertEquals(List.of(racing, late), await(store.describe(freshId)).publications());
        assertArrayEquals(fresh, await(store.read(freshId)));
    }

    @Test
    void readsRecordsWrittenInTheOlderMetadataShape() {
        byte[] bytes = randomBytes(512);
        String id = idOf(bytes);
        String legacy = "{\"segmentId\":\"" + id + "\",\"partition\":\"p-old\",\"logEpoch\":\"e0\",\"table\":\"tasks\","
                + "\"schemaVersion\":2,\"mediaType\":\"rows\",\"scopeDigest\":\"sd-1\",\"scopeDigests\":[\"sd-1\",\"sd-2\"],"
                + "\"asOfCommitSeq\":9,\"rowCount\":4,\"rowCursor\":null,\"nextRowCursor\":\"c9\",\"byteLength\":512,"
                + "\"createdAtMs\":100,\"expiresAtMs\":" + FAR + "}";
        s3.putObject(
                r -> r.bucket(bucket)
                        .key(s3store.objectKey(id))
                        .metadata(Map.of(
                                PublicationRecords.LEGACY_METADATA,
                                Base64.getUrlEncoder()
                                        .withoutPadding()
                                        .encodeToString(legacy.getBytes(StandardCharsets.UTF_8)))),
                RequestBody.fromBytes(bytes));

        StoredSegment s = await(store.describe(id));
        assertNotNull(s);
        assertEquals(512L, s.byteLength());
        assertEquals(
                List.of(
                        new SegmentPublication(
                                "p-old", "e0", "tasks", 2, MediaType.ROWS, "sd-1", 9L, null, "c9", 4L, 100L, FAR),
                        new SegmentPublication(
                                "p-old", "e0", "tasks", 2, MediaType.ROWS, "sd-2", 9L, null, "c9", 4L, 100L, FAR)),
                s.publications());
        assertArrayEquals(bytes, await(store.read(id)));

        // the next publish materializes the record object and keeps nothing from the old one but the bytes
        SegmentPublication fresh = new SegmentPublication(
                "p-new", "e1", "tasks", 2, MediaType.ROWS, "sd-3", 10L, null, null, 4L, 200L, FAR);
        await(store.publish(id, bytes, fresh));
        assertEquals(List.of(fresh), await(store.describe(id)).publications());
    }

    @Test
    void publishRestoresBytesRemovedBehindTheRecord() {
        byte[] bytes = randomBytes(400);
        String id = idOf(bytes);
        SegmentPublication p =
                new SegmentPublication("p-gc", "e1", "tasks", 1, MediaType.SQLITE, "sd", 5L, null, null, 3L, 1L, FAR);
        await(store.publish(id, bytes, p));
        s3.deleteObject(r -> r.bucket(bucket).key(s3store.objectKey(id))); // a lifecycle rule collected the bytes
        assertNull(await(store.find(SegmentStore.ReuseKey.of(p), 2L)), "find must confirm the bytes exist");
        await(store.publish(id, bytes, p));
        assertArrayEquals(bytes, await(store.read(id)));
        assertEquals(id, await(store.find(SegmentStore.ReuseKey.of(p), 2L)).segmentId());
    }

    @Test
    void presignedUrlServesTheExactBytesAndTamperingOrExpiryIsRefused() throws Exception {
        byte[] bytes = randomBytes(2048);
        String id = idOf(bytes);
        await(store.publish(id, bytes, pub("sd", 1L, FAR)));

        SegmentUrlSigner.SignedUrl url =
                s3store.presignedUrls(Duration.ofMinutes(5)).issue(id, "sd", "p1", System.currentTimeMillis());
        assertTrue(url.url().contains("seg/sha256/" + id.substring(7)), "the signed key embeds the segment id");
        assertTrue(url.expiresAtMs() > System.currentTimeMillis() + 60_000);
        assertArrayEquals(bytes, fetch(url.url()).body);

        // tampered: another object under the same signature
        byte[] other = randomBytes(16);
        await(store.publish(idOf(other), other, pub("sd", 1L, FAR)));
        String tampered = url.url().replace(id.substring(7), idOf(other).substring(7));
        assertEquals(403, fetch(tampered).status);
        // tampered signature
        int sig = url.url().indexOf("X-Amz-Signature=") + "X-Amz-Signature=".length();
        char c = url.url().charAt(sig);
        String badSig =
                url.url().substring(0, sig) + (c == 'a' ? 'b' : 'a') + url.url().substring(sig + 1);
        assertEquals(403, fetch(badSig).status);

        // expired: a one-second URL is refused once its expiry passed (polled against a deadline)
        SegmentUrlSigner.SignedUrl shortUrl =
                s3store.presignedUrls(Duration.ofSeconds(1)).issue(id, "sd", "p1", System.currentTimeMillis());
        long deadline = System.currentTimeMillis() + 30_000;
        int status = 200;
        while (status == 200 && System.currentTimeMillis() < deadline) {
            status = fetch(shortUrl.url()).status;
        }
        assertEquals(403, status);
        assertTrue(shortUrl.expiresAtMs() <= System.currentTimeMillis() + 1_000, "expiry reported as signed");
    }

    private record Fetched(int status, byte[] body) {}

    private static Fetched fetch(String url) throws IOException {
        HttpURLConnection c = (HttpURLConnection) URI.create(url).toURL().openConnection();
        int status = c.getResponseCode();
        try (InputStream in = status < 400 ? c.getInputStream() : c.getErrorStream()) {
            return new Fetched(status, in == null ? new byte[0] : in.readAllBytes());
        } finally {
            c.disconnect();
        }
    }
}
