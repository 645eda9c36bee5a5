package dev.syncular.server.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.testsupport.ChildJvm;
import dev.syncular.server.testsupport.ServerProcess;
import dev.syncular.server.testsupport.StartsProcesses;
import dev.syncular.server.wire.CanonicalJson;
import io.smallrye.jwt.build.Jwt;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The command-line client end to end: {@code target/syncular-cli.jar} run as its own process, as a user runs
 * it, against the packaged server ({@link ServerProcess}) serving a schema that is not bundled
 * ({@code src/test/resources/schema/inventory.syncular.ir.json}: {@code warehouses} and {@code items}, the
 * second with an integer primary key, json and blob_ref columns and a reference to the first). One server
 * authenticates by the development header ({@code --actor}, {@code --partition}), the other by JWT
 * ({@code --token}, {@code -H}). Every invocation is a new process: the state file carries the sync.
 */
@StartsProcesses
class CliIT {
    private static final Path JAR = Path.of("target", "syncular-cli.jar");
    private static final Path SCHEMA = Path.of("src", "test", "resources", "schema", "inventory.syncular.ir.json");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PG_SCHEMA =
            "it_cli_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);

    static ServerProcess devAuth;
    static ServerProcess jwtAuth;
    static KeyPair keys;

    @TempDir
    Path dir;

    private String partition;

    @BeforeAll
    static void start() throws Exception {
        assertTrue(Files.isRegularFile(JAR), JAR + " is built by `package`");
        String schema = SCHEMA.toAbsolutePath().toString();
        devAuth = ServerProcess.builder("cli-dev-auth", PG_SCHEMA)
                .env("SYNCULAR_SCHEMA_PATH", schema)
                .start();
        KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
        g.initialize(2048);
        keys = g.generateKeyPair();
        String pem = "-----BEGIN PUBLIC KEY-----\n"
                + Base64.getMimeEncoder().encodeToString(keys.getPublic().getEncoded())
                + "\n-----END PUBLIC KEY-----\n";
        jwtAuth = ServerProcess.builder("cli-jwt-auth", PG_SCHEMA + "_jwt")
                .env("SYNCULAR_SCHEMA_PATH", schema)
                .env("SYNCULAR_AUTH_JWT_PUBLIC_KEY", pem)
                .start();
    }

    @AfterAll
    static void stop() throws Exception {
        if (devAuth != null) {
            devAuth.close();
        }
        if (jwtAuth != null) {
            jwtAuth.close();
        }
    }

    @BeforeEach
    void freshPartition() {
        partition = "cli-" + UUID.randomUUID();
    }

    /** One finished CLI process. */
    record Run(int exit, String out, String err) {
        /** stdout as its JSON documents, in order. */
        List<JsonNode> docs() throws Exception {
            List<JsonNode> docs = new ArrayList<>();
            JSON.readerFor(JsonNode.class).readValues(out).forEachRemaining(n -> docs.add((JsonNode) n));
            return docs;
        }

        JsonNode doc() throws Exception {
            List<JsonNode> docs = docs();
            assertEquals(1, docs.size(), out);
            return docs.get(0);
        }
    }

    private Run cli(List<String> args) throws Exception {
        List<String> cmd = ChildJvm.command();
        cmd.addAll(List.of("-jar", JAR.toAbsolutePath().toString()));
        cmd.addAll(args);
        Path out = Files.createTempFile(dir, "out", ".txt");
        Path err = Files.createTempFile(dir, "err", ".txt");
        Process p = new ProcessBuilder(cmd)
                .directory(dir.toFile())
                .redirectOutput(out.toFile())
                .redirectError(err.toFile())
                .start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("the CLI did not finish within 120 s: " + args);
        }
        return new Run(p.exitValue(), Files.readString(out), Files.readString(err));
    }

    /** The CLI against the dev-auth server as {@code actor}, with its own state file; must succeed. */
    private Run as(String actor, String... args) throws Exception {
        Run r = asAllowingFailure(actor, args);
        assertEquals(0, r.exit(), () -> "exit " + r.exit() + "\nstdout:\n" + r.out() + "\nstderr:\n" + r.err());
        return r;
    }

    private Run asAllowingFailure(String actor, String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of(
                "--url",
                devAuth.baseUrl(),
                "--schema",
                SCHEMA.toAbsolutePath().toString(),
                "--state",
                actor + ".json",
                "--actor",
                actor,
                "--partition",
                partition));
        all.addAll(List.of(args));
        return cli(all);
    }

    private static List<JsonNode> frames(JsonNode response, String type) {
        return StreamSupport.stream(response.path("frames").spliterator(), false)
                .filter(f -> f.path("type").asText().equals(type))
                .toList();
    }

    private static JsonNode state(Path file) throws Exception {
        return JSON.readTree(file.toFile());
    }

    @Test
    void pushesPullsAndBootstrapsAcrossInvocationsWithTheStateFile() throws Exception {
        as("alice", "subscribe", "items", "items", "org_id=acme");
        List<JsonNode> first = as(
                        "alice",
                        "push",
                        "warehouses",
                        "{\"id\":\"w1\",\"org_id\":\"acme\",\"name\":\"North\",\"capacity\":100}")
                .docs();
        // Round 1 learns the partition's log epoch (§2.1), round 2 pushes and pulls.
        assertEquals(2, first.size());
        assertTrue(first.get(0).path("frames").get(0).path("resetRequired").asBoolean());
        assertEquals(
                "applied",
                frames(first.get(1), "PUSH_RESULT").get(0).path("status").asText());

        Files.writeString(dir.resolve("items.json"), """
                [{"sku": 1, "org_id": "acme", "warehouse_id": "w1", "label": "bolt", "price": 2.5,
                  "in_stock": true, "tags": ["steel", "m6"], "photo": null},
                 {"sku": 2, "org_id": "acme", "warehouse_id": "w1", "label": "nut", "price": null,
                  "in_stock": false, "tags": null, "photo": null}]""");
        JsonNode pushed = as("alice", "push", "items", "@items.json").doc();
        JsonNode result = frames(pushed, "PUSH_RESULT").get(0);
        assertEquals("applied", result.path("status").asText());
        assertEquals(2, result.path("results").size());
        JsonNode aliceState = state(dir.resolve("alice.json"));
        assertEquals(2, aliceState.path("commitCount").asInt());
        assertFalse(aliceState.path("logEpoch").isNull());
        assertTrue(aliceState.path("subscriptions").get(0).path("cursor").asLong() >= 0, aliceState.toString());

        // Bob bootstraps with another client and state file and sees the rows, decoded (§11.1 rule 8).
        as("bob", "subscribe", "items", "items", "org_id=acme");
        List<JsonNode> boot = as("bob", "bootstrap", "--decode").docs();
        JsonNode segment = boot.stream()
                .filter(d -> d.path("magic").asText().equals("SSG2"))
                .findFirst()
                .orElseThrow();
        assertEquals("items", segment.path("table").asText());
        JsonNode rows = segment.path("blocks").get(0);
        assertEquals(2, rows.size());
        JsonNode bolt = rows.get(0).path("values");
        assertEquals(1, bolt.path("sku").asLong());
        assertEquals(2.5, bolt.path("price").asDouble());
        assertEquals(List.of("steel", "m6"), JSON.convertValue(bolt.path("tags"), List.class));
        long version = rows.get(0).path("serverVersion").asLong();
        JsonNode bobState = state(dir.resolve("bob.json")).path("subscriptions").get(0);
        assertTrue(bobState.path("bootstrapState").isNull());
        assertEquals("active", bobState.path("status").asText());

        // Alice edits with the version Bob holds (§6.2); a second edit from that stale version conflicts.
        as("alice", "push", "items", "{\"sku\":1,\"label\":\"hex bolt\",\"$baseVersion\":" + version + "}");
        JsonNode stale = as("alice", "push", "items", "{\"sku\":1,\"label\":\"bolt\",\"$baseVersion\":" + version + "}")
                .doc();
        assertEquals(
                "conflict",
                frames(stale, "PUSH_RESULT")
                        .get(0)
                        .path("results")
                        .get(0)
                        .path("status")
                        .asText());
        as("alice", "push", "items", "{\"$delete\":2}");

        // Bob's next pull continues from his stored cursor: just the two changes, decoded.
        List<JsonNode> pull = as("bob", "pull", "--decode").docs();
        List<JsonNode> commits = frames(pull.get(0), "COMMIT");
        assertEquals(2, commits.size(), pull.get(0).toString());
        JsonNode edit = pull.get(1);
        assertEquals("1", edit.path("rowId").asText());
        assertEquals("hex bolt", edit.path("values").path("label").asText());
        assertEquals("steel", edit.path("values").path("tags").get(0).asText());
        JsonNode delete = pull.get(2);
        assertEquals("2", delete.path("rowId").asText());
        assertEquals("delete", delete.path("op").asText());

        // Another partition (x-syncular-partition) is another data set: nothing there.
        String other = partition;
        partition = "cli-other-" + UUID.randomUUID();
        as("carol", "subscribe", "items", "items", "org_id=acme");
        List<JsonNode> empty = as("carol", "bootstrap", "--decode").docs();
        assertTrue(
                empty.stream()
                        .noneMatch(d -> d.path("magic").asText().equals("SSG2")
                                && d.path("blocks").path(0).size() > 0),
                empty.toString());
        partition = other;
    }

    @Test
    void downloadsAVerifiedSegmentAndRendersIt() throws Exception {
        as("alice", "subscribe", "wh", "warehouses", "org_id=acme");
        as(
                "alice",
                "push",
                "warehouses",
                "[{\"id\":\"w1\",\"org_id\":\"acme\",\"name\":\"North\",\"capacity\":null},"
                        + "{\"id\":\"w2\",\"org_id\":\"acme\",\"name\":\"South\",\"capacity\":7}]");
        as("bob", "subscribe", "wh", "warehouses", "org_id=acme");
        // Only external rows accepted: the bootstrap references a segment, which the CLI fetched and verified.
        List<JsonNode> boot = as("bob", "bootstrap", "--accept", "external").docs();
        JsonNode ref = boot.stream()
                .flatMap(d -> frames(d, "SEGMENT_REF").stream())
                .findFirst()
                .orElseThrow();
        String segmentId = ref.path("segmentId").asText();
        assertEquals(2, ref.path("rowCount").asLong());

        JsonNode rendered = as("bob", "segment", segmentId, "--sub", "wh").doc();
        assertEquals("SSG2", rendered.path("magic").asText());
        assertEquals(
                "South",
                rendered.path("blocks")
                        .get(0)
                        .get(1)
                        .path("values")
                        .path("name")
                        .asText());

        Run saved = as("bob", "segment", segmentId, "--scopes", "{\"org_id\":[\"acme\"]}", "--out", "seg.bin");
        byte[] bytes = Files.readAllBytes(dir.resolve("seg.bin"));
        assertEquals(segmentId, "sha256:" + CanonicalJson.sha256Hex(bytes));
        assertTrue(saved.err().contains(bytes.length + " bytes written"), saved.err());
        assertEquals(rendered, as("bob", "render", "seg.bin").doc());
    }

    @Test
    void uploadsABlobReferencesItInARowAndDownloadsIt() throws Exception {
        byte[] photo = ("not really a png " + UUID.randomUUID()).getBytes(StandardCharsets.UTF_8);
        Files.write(dir.resolve("photo.png"), photo);
        JsonNode blobRef = as("alice", "blob", "put", "photo.png", "--media-type", "image/png")
                .doc();
        String blobId = "sha256:" + CanonicalJson.sha256Hex(photo);
        assertEquals(blobId, blobRef.path("blobId").asText());
        assertEquals(photo.length, blobRef.path("byteLength").asInt());

        as("alice", "push", "warehouses", "{\"id\":\"w1\",\"org_id\":\"acme\",\"name\":\"North\",\"capacity\":null}");
        JsonNode pushed = as(
                        "alice",
                        "push",
                        "items",
                        "{\"sku\":7,\"org_id\":\"acme\",\"warehouse_id\":\"w1\","
                                + "\"label\":\"crate\",\"price\":null,\"in_stock\":true,\"tags\":null,\"photo\":"
                                + blobRef + "}")
                .doc();
        assertEquals(
                "applied", frames(pushed, "PUSH_RESULT").get(0).path("status").asText());

        as("bob", "blob", "get", blobId, "--out", "copy.png");
        assertArrayEquals(photo, Files.readAllBytes(dir.resolve("copy.png")));
    }

    @Test
    void sendsABearerTokenOrAnyHeaderAndPrintsTheServersErrorJson() throws Exception {
        String token = Jwt.subject("dana")
                .claim("syncular_scopes", Map.of("org_id", List.of("acme")))
                .issuedAt(Instant.now())
                .expiresAt(Instant.now().plusSeconds(300))
                .sign(keys.getPrivate());
        List<String> base = List.of(
                "--url", jwtAuth.baseUrl(), "--schema", SCHEMA.toAbsolutePath().toString(), "--state", "dana.json");
        assertEquals(
                0,
                cli(concat(base, "subscribe", "items", "items", "org_id=acme")).exit());

        // No credentials: the server's §10.1 JSON on stdout, exit status 1.
        Run refused = cli(concat(base, "pull"));
        assertEquals(SyncularCli.SERVER_REFUSED, refused.exit(), refused.err());
        JsonNode error = refused.doc();
        assertEquals("sync.auth_required", error.path("code").asText());
        assertTrue(error.has("category") && error.has("retryable") && error.has("recommendedAction"), error.toString());
        assertTrue(refused.err().contains("HTTP 401"), refused.err());

        Run withToken = cli(concat(base, "pull", "--token", token));
        assertEquals(0, withToken.exit(), withToken.err());
        assertEquals("SSP2", withToken.docs().get(0).path("magic").asText());

        // The same token as an arbitrary header, plus a request id the server echoes (-v shows the answer's headers).
        Run headers = cli(concat(
                base, "pull", "-H", "Authorization: Bearer " + token, "-H", "X-Request-Id: cli-it-42", "--verbose"));
        assertEquals(0, headers.exit(), headers.err());
        assertTrue(headers.err().toLowerCase(Locale.ROOT).contains("< x-request-id: cli-it-42"), headers.err());
        assertEquals(
                "active",
                frames(headers.docs().get(0), "SUB_START").get(0).path("status").asText());
    }

    @Test
    void reportsLocalMistakesWithoutCallingTheServer() throws Exception {
        Run column = asAllowingFailure("alice", "push", "items", "{\"sku\":1,\"colour\":\"red\"}");
        assertEquals(SyncularCli.LOCAL_ERROR, column.exit());
        assertTrue(column.err().contains("table 'items' has no column 'colour'"), column.err());
        Run type = asAllowingFailure("alice", "push", "items", "{\"sku\":\"one\"}");
        assertEquals(SyncularCli.LOCAL_ERROR, type.exit());
        assertTrue(type.err().contains("column 'sku' is integer"), type.err());
        Run table = asAllowingFailure("alice", "push", "todos", "{}");
        assertTrue(table.err().contains("the schema has no table 'todos'"), table.err());
        assertFalse(Files.exists(dir.resolve("alice.json")), "nothing was synced, no state written");

        // A segment the server does not have: its 404 JSON.
        Run missing = asAllowingFailure(
                "alice", "segment", "sha256:" + "0".repeat(64), "--scopes", "{\"org_id\":[\"acme\"]}");
        assertEquals(SyncularCli.SERVER_REFUSED, missing.exit(), missing.err());
        assertTrue(missing.doc().path("code").asText().startsWith("sync."), missing.out());
    }

    private static List<String> concat(List<String> base, String... more) {
        List<String> all = new ArrayList<>(base);
        all.addAll(List.of(more));
        return all;
    }
}
