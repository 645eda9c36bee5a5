package dev.syncular.server.blobs.s3;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.syncular.server.blobs.BlobKey;
import java.net.URI;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3AsyncClient;

/**
 * The S3 object layout of blobs (§5.9.2): {@code {prefix}blob/{partition, percent-encoded}/sha256/{hex}}, read back
 * by the orphan sweep. No call reaches S3: the client is built and never used (the store's S3 round trips are in
 * {@code S3BlobStoreTest}, against an S3-compatible server).
 */
class S3BlobKeysTest {
    static final String ID = "sha256:" + "0f".repeat(32);
    static S3AsyncClient client;
    static S3BlobStore store;

    @BeforeAll
    static void build() {
        client = S3AsyncClient.builder()
                .endpointOverride(URI.create("http://127.0.0.1:9"))
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("k", "s")))
                .build();
        store = new S3BlobStore(client, null, "bucket", "app/", Duration.ofMinutes(5));
    }

    @AfterAll
    static void close() {
        client.close();
    }

    @Test
    void aKeyNamesItsPartitionAndBlobAndIsReadBack() {
        assertEquals("app/blob/p-1/sha256/" + "0f".repeat(32), store.key("p-1", ID));
        // a partition id is any text: what is not unreserved is percent-encoded, so no partition reaches another's keys
        String odd = "team/α b%";
        String key = store.key(odd, ID);
        assertEquals("app/blob/team%2F%CE%B1%20b%25/sha256/" + "0f".repeat(32), key);
        assertEquals(new BlobKey(odd, ID), store.parseKey(key));
        assertEquals(new BlobKey("p-1", ID), store.parseKey(store.key("p-1", ID)));
    }

    @Test
    void keysOutsideTheLayoutAreNotBlobs() {
        assertNull(store.parseKey("other/blob/p/sha256/" + "0f".repeat(32)), "another prefix");
        assertNull(store.parseKey("app/blob/p/md5/" + "0f".repeat(16)), "another digest");
        assertNull(store.parseKey("app/blob/p/sha256/" + "0F".repeat(32)), "not a canonical id");
        assertNull(store.parseKey("app/blob/%zz/sha256/" + "0f".repeat(32)), "a broken escape");
        assertNull(store.parseKey("app/blob/p"), "no digest part");
        assertThrows(IllegalArgumentException.class, () -> store.key("p", "sha256:00"));
    }
}
