package dev.syncular.server.http;

import static dev.syncular.server.http.HttpBlobScenariosTest.attachment;
import static dev.syncular.server.http.HttpBlobScenariosTest.json;
import static dev.syncular.server.http.HttpBlobScenariosTest.randomBytes;
import static dev.syncular.server.http.HttpBlobScenariosTest.ref;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.syncular.server.blobs.BlobIds;
import dev.syncular.server.sync.SyncScenariosContract;
import dev.syncular.server.testsupport.BlobHttp;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.NotesAppProfile;
import dev.syncular.server.testsupport.StartsProcesses;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestS3;
import dev.syncular.server.wire.CommitStatus;
import dev.syncular.server.wire.PullHeader;
import dev.syncular.server.wire.PushOperation;
import dev.syncular.server.wire.SegmentRef;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * S3 configured exactly as docs/SEGMENTS.md "Run it locally against S3" says (the same block in docs/BLOBS.md):
 * the server boots with that block's lines and nothing else about S3 — only the endpoint and the bucket are
 * pointed at the test's s3proxy ({@link TestS3}, which {@code scripts/local-s3.sh} also runs, with the same keys and
 * the same SigV4 checks). Then a blob goes through the server into the bucket ({@code PUT <mount>/blobs/{id}}, the
 * upload s3proxy refused while the AWS SDK sent aws-chunked trailing checksums) and back through a presigned
 * {@code GET}, a presigned upload grant is used, and a bootstrap is delivered as S3 rows segments (§5.2), fetched
 * through presigned URLs (§5.4) and through the authenticated {@code GET <mount>/segments/{id}} (§5.5).
 */
@StartsProcesses
@QuarkusTest
@TestProfile(S3ConfigAsDocumentedTest.AsDocumented.class)
class S3ConfigAsDocumentedTest {
    static final String DOC_ENDPOINT = "http://127.0.0.1:4566";
    static final String DOC_BUCKET = "my-app-sync";

    /** The {@code properties} block under the doc's "Run it locally against S3" heading. */
    static String documentedBlock(Path doc, String heading) {
        try {
            String text = Files.readString(doc);
            int at = text.indexOf(heading);
            assertTrue(at >= 0, doc + " has no section " + heading);
            Matcher m =
                    Pattern.compile("```properties\\n(.*?)```", Pattern.DOTALL).matcher(text);
            assertTrue(m.find(at), doc + ": no properties block after " + heading);
            return m.group(1);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static class AsDocumented implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            String block = documentedBlock(Path.of("docs/SEGMENTS.md"), "## Run it locally against S3");
            assertTrue(Files.exists(Path.of("scripts/local-s3.sh")), "the doc's one-command S3 server");
            Properties documented = new Properties();
            try {
                documented.load(new StringReader(block));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            assertEquals(DOC_ENDPOINT, documented.getProperty("quarkus.s3.endpoint-override"));
            assertEquals(DOC_BUCKET, documented.getProperty("syncular.s3.bucket"));
            assertEquals(
                    TestS3.ACCESS_KEY,
                    documented.getProperty("quarkus.s3.aws.credentials.static-provider.access-key-id"));
            assertEquals(
                    TestS3.SECRET_KEY,
                    documented.getProperty("quarkus.s3.aws.credentials.static-provider.secret-access-key"));
            Map<String, String> m = new HashMap<>();
            for (String name : documented.stringPropertyNames()) {
                m.put(name, documented.getProperty(name));
            }
            m.put("quarkus.s3.endpoint-override", TestS3.endpoint());
            m.put("syncular.s3.bucket", TestS3.newBucket());
            // Not S3 settings: the scenario schema (it has a blob_ref table) in its own PostgreSQL schema.
            m.putAll(NotesAppProfile.notesIn("sync_s3doc_"));
            return m;
        }
    }

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    @Test
    void blobsAndBlobsMdShowTheSameConfiguration() {
        assertEquals(
                documentedBlock(Path.of("docs/SEGMENTS.md"), "## Run it locally against S3"),
                documentedBlock(Path.of("docs/BLOBS.md"), "To run against S3 locally"));
    }

    @Test
    void aBlobGoesThroughTheServerIntoTheBucketAndBack() {
        String partition = "tenant-" + UUID.randomUUID();
        BlobHttp blobs = new BlobHttp("http://localhost:" + port, partition);
        byte[] bytes = randomBytes(300_000);
        String blobId = BlobIds.compute(bytes);
        HttpResponse<byte[]> put = blobs.put("alice", blobId, bytes);
        assertEquals(200, put.statusCode(), BlobHttp.text(put));

        // a presigned upload grant, used with no server credentials
        byte[] other = randomBytes(1_000);
        String otherId = BlobIds.compute(other);
        HttpResponse<byte[]> grant = blobs.grant("alice", otherId, "{\"byteLength\":" + other.length + "}");
        assertEquals(200, grant.statusCode(), BlobHttp.text(grant));
        String uploadUrl = json(grant).path("url").asText();
        assertTrue(uploadUrl.startsWith(TestS3.endpoint() + "/"), uploadUrl);
        assertEquals(200, BlobHttp.putTo(uploadUrl, other).statusCode());

        SyncTestClient writer = new SyncTestClient(
                        SyncScenariosContract.SCHEMA,
                        new HttpTransport("http://localhost:" + port, partition),
                        "alice",
                        "alice-" + UUID.randomUUID())
                .subscribe("att", "attachments", Map.of("project_id", List.of("p1")));
        writer.syncUntilIdle();
        String c1 = writer.upsert("attachments", attachment("a1", "p1", ref(blobId, bytes.length)), null);
        String c2 = writer.upsert("attachments", attachment("a2", "p1", ref(otherId, other.length)), null);
        writer.syncUntilIdle();
        assertEquals(CommitStatus.APPLIED, writer.result(c1).status(), String.valueOf(writer.result(c1)));
        assertEquals(CommitStatus.APPLIED, writer.result(c2).status(), String.valueOf(writer.result(c2)));

        for (Map.Entry<String, byte[]> e : Map.of(blobId, bytes, otherId, other).entrySet()) {
            HttpResponse<byte[]> get = blobs.get("alice", e.getKey());
            assertEquals(200, get.statusCode(), BlobHttp.text(get));
            JsonNode download = json(get);
            assertTrue(download.path("url").asText().startsWith(TestS3.endpoint() + "/"), download.toString());
            HttpResponse<byte[]> fetched = BlobHttp.fetch(download.path("url").asText());
            assertEquals(200, fetched.statusCode());
            assertArrayEquals(e.getValue(), fetched.body());
        }
    }

    @Test
    void aBootstrapIsDeliveredAsS3Segments() {
        String partition = "tenant-" + UUID.randomUUID();
        HttpTransport transport = new HttpTransport("http://localhost:" + port, partition);
        SyncTestClient writer = new SyncTestClient(
                        SyncScenariosContract.SCHEMA, transport, "alice", "w-" + UUID.randomUUID())
                .subscribe("notes-p1", "notes", Map.of("project_id", List.of("p1")));
        List<PushOperation> ops = new ArrayList<>();
        for (int i = 0; i < 120; i++) {
            Map<String, Object> row = new HashMap<>();
            row.put("id", String.format("n-%04d", i));
            row.put("project_id", "p1");
            row.put("title", "t" + i);
            row.put("body", "body " + i);
            row.put("priority", (long) i);
            row.put("done", i % 2 == 0);
            ops.add(writer.upsertOp("notes", row, null));
        }
        String commit = writer.commit(ops);
        writer.syncUntilIdle();
        assertEquals(CommitStatus.APPLIED, writer.result(commit).status(), String.valueOf(writer.result(commit)));

        // presigned delivery straight from the bucket (§5.4)
        SyncTestClient presigned = new SyncTestClient(
                        SyncScenariosContract.SCHEMA, transport, "bob", "b-" + UUID.randomUUID())
                .subscribe("notes-p1", "notes", Map.of("project_id", List.of("p1")));
        presigned.accept = PullHeader.ACCEPT_EXTERNAL_ROWS | PullHeader.ACCEPT_SIGNED_URLS;
        presigned.limitSnapshotRows = 40;
        presigned.syncUntilIdle();
        assertEquals(120, presigned.table("notes").size());
        assertTrue(presigned.urlFetches >= 3, "one presigned URL per page: " + presigned.urlFetches);
        assertEquals(0, presigned.segmentDownloads);
        for (SegmentRef r : presigned.segmentRefs) {
            assertTrue(r.url().startsWith(TestS3.endpoint() + "/"), r.url());
            assertTrue(r.url().contains("/syncular/seg/sha256/"), "the documented key prefix: " + r.url());
        }

        // the authenticated route reads the same S3 objects (§5.5)
        SyncTestClient direct = new SyncTestClient(
                        SyncScenariosContract.SCHEMA, transport, "carol", "c-" + UUID.randomUUID())
                .subscribe("notes-p1", "notes", Map.of("project_id", List.of("p1")));
        direct.accept = PullHeader.ACCEPT_EXTERNAL_ROWS;
        direct.limitSnapshotRows = 40;
        direct.syncUntilIdle();
        assertEquals(presigned.table("notes").keySet(), direct.table("notes").keySet());
        assertTrue(direct.segmentDownloads >= 3, "downloads: " + direct.segmentDownloads);
        assertTrue(direct.segmentRefs.stream().allMatch(r -> r.url() == null));
        assertNull(direct.subscriptions.get("notes-p1").bootstrapState);
    }
}
