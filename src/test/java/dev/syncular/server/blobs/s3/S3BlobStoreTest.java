package dev.syncular.server.blobs.s3;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.blobs.BlobContent;
import dev.syncular.server.blobs.BlobIds;
import dev.syncular.server.blobs.BlobInfo;
import dev.syncular.server.blobs.BlobStore;
import dev.syncular.server.blobs.BlobStoreContract;
import dev.syncular.server.blobs.PresignedUrl;
import dev.syncular.server.testsupport.StartsProcesses;
import dev.syncular.server.testsupport.TestS3;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.Base64;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.s3.S3AsyncClient;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.presigner.S3Presigner;

/**
 * The {@link BlobStoreContract} against a real S3-compatible server ({@link TestS3}: s3proxy verifying SigV4),
 * in a fresh bucket, plus the object layout, metadata and presigned GET/PUT behaviour.
 */
@StartsProcesses
class S3BlobStoreTest extends BlobStoreContract {
    private static final String PREFIX = "pfx/";
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private S3Client client;
    private S3AsyncClient async;
    private S3Presigner presigner;
    private String bucket;

    @Override
    protected BlobStore createStore() {
        client = TestS3.client();
        async = TestS3.asyncClient();
        presigner = TestS3.presigner();
        bucket = TestS3.newBucket();
        return new S3BlobStore(async, presigner, bucket, PREFIX, Duration.ofMinutes(5));
    }

    @AfterAll
    void close() {
        client.close();
        async.close();
        presigner.close();
    }

    private static HttpResponse<byte[]> send(HttpRequest r) throws Exception {
        return HTTP.send(r, HttpResponse.BodyHandlers.ofByteArray());
    }

    @Test
    void objectLayoutAndMetadata() {
        String p = "tenant-" + UUID.randomUUID();
        byte[] bytes = randomBytes(77);
        String id = BlobIds.compute(bytes);
        await(store.put(p, BlobContent.verify(id, bytes), "text/csv", 123_456L));
        String key = PREFIX + "blob/" + p + "/sha256/" + BlobIds.hex(id);
        assertEquals(key, ((S3BlobStore) store).key(p, id));
        HeadObjectResponse head = client.headObject(b -> b.bucket(bucket).key(key));
        assertEquals(77L, head.contentLength());
        assertEquals("application/octet-stream", head.contentType());
        JsonNode meta = read(head.metadata().get("syncular-blob"));
        assertEquals(77, meta.get("byteLength").asInt());
        assertEquals("text/csv", meta.get("mediaType").asText());
        assertEquals(123_456L, meta.get("createdAtMs").asLong());
        assertArrayEquals(
                bytes, client.getObjectAsBytes(b -> b.bucket(bucket).key(key)).asByteArray());
        assertEquals("a%2Fb%20c", S3BlobStore.encodePartition("a/b c"));
        assertEquals("a/b c", S3BlobStore.decodePartition("a%2Fb%20c"));
    }

    private static JsonNode read(String base64url) {
        try {
            return new ObjectMapper().readTree(Base64.getUrlDecoder().decode(base64url));
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void presignedGetServesTheBytesAndATamperedOneIsRefused() throws Exception {
        String p = partition();
        byte[] bytes = randomBytes(2048);
        String id = BlobIds.compute(bytes);
        await(store.put(p, BlobContent.verify(id, bytes), null, 1L));
        PresignedUrl url = await(store.presignGet(p, id, System.currentTimeMillis()));
        assertTrue(url.url().contains(BlobIds.hex(id)), "the signed key embeds the blob id");
        HttpResponse<byte[]> ok =
                send(HttpRequest.newBuilder(URI.create(url.url())).GET().build());
        assertEquals(200, ok.statusCode());
        assertArrayEquals(bytes, ok.body());
        String sig = "X-Amz-Signature=";
        int at = url.url().indexOf(sig) + sig.length();
        char c = url.url().charAt(at);
        String tampered =
                url.url().substring(0, at) + (c == 'a' ? 'b' : 'a') + url.url().substring(at + 1);
        assertEquals(
                403,
                send(HttpRequest.newBuilder(URI.create(tampered)).GET().build()).statusCode());
        String otherKey = url.url().replace(BlobIds.hex(id), BlobIds.hex(BlobIds.compute(new byte[] {1})));
        assertEquals(
                403,
                send(HttpRequest.newBuilder(URI.create(otherKey)).GET().build()).statusCode());
    }

    @Test
    void presignedPutIsBoundToTheGrantedLength() throws Exception {
        String p = partition();
        byte[] bytes = randomBytes(1000);
        String id = BlobIds.compute(bytes);
        PresignedUrl grant = await(store.presignPut(p, id, bytes.length, System.currentTimeMillis()));
        byte[] longer = Arrays.copyOf(bytes, 1001);
        HttpResponse<byte[]> refused = send(HttpRequest.newBuilder(URI.create(grant.url()))
                .PUT(HttpRequest.BodyPublishers.ofByteArray(longer))
                .build());
        assertNotEquals(200, refused.statusCode());
        assertTrue(refused.statusCode() >= 400 && refused.statusCode() < 500, "status " + refused.statusCode());
        assertNull(await(store.describe(p, id)));

        long before = System.currentTimeMillis() - 2000;
        HttpResponse<byte[]> ok = send(HttpRequest.newBuilder(URI.create(grant.url()))
                .PUT(HttpRequest.BodyPublishers.ofByteArray(bytes))
                .build());
        assertEquals(200, ok.statusCode());
        BlobInfo info = await(store.describe(p, id));
        assertEquals(1000, info.byteLength());
        assertNull(info.mediaType());
        assertTrue(info.createdAtMs() >= before, "upload time from the object itself");
        assertArrayEquals(bytes, readAll(p, id));
        // an idempotent re-upload through the store keeps that upload time
        assertEquals(
                info.createdAtMs(),
                await(store.put(p, BlobContent.verify(id, bytes), "x/y", 1L)).createdAtMs());
    }
}
