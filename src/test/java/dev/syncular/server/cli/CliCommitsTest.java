package dev.syncular.server.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.sync.SyncScenariosContract;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.NotesAppProfile;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.CommitStatus;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The command-line client ({@link SyncularCli#run}, in process) against the running server over real HTTP:
 * {@code push <rows>} with {@code "$table"} puts rows of two tables into one commit (§6.4: one commit, applied
 * atomically, one {@code PUSH_RESULT}), and {@code --decode} prints a push conflict (§6.3) with its
 * {@code serverRow} decoded to column values and its {@code conflictColumns} bitmap as column names.
 */
@QuarkusTest
@TestProfile(NotesAppProfile.class)
class CliCommitsTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String SCHEMA = NotesAppProfile.SCHEMA;

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    @TempDir
    Path dir;

    private String partition;

    @BeforeEach
    void freshPartition() {
        partition = "cli-" + UUID.randomUUID();
    }

    record Run(int exit, String out, String err) {
        List<JsonNode> docs() throws Exception {
            List<JsonNode> docs = new ArrayList<>();
            JSON.readerFor(JsonNode.class).readValues(out).forEachRemaining(n -> docs.add((JsonNode) n));
            return docs;
        }
    }

    private Run cli(String state, String... args) {
        List<String> all = new ArrayList<>(List.of(
                "--url",
                "http://localhost:" + port,
                "--schema",
                SCHEMA,
                "--actor",
                "alice",
                "--partition",
                partition,
                "--state",
                dir.resolve(state).toString()));
        all.addAll(List.of(args));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = SyncularCli.run(
                all.toArray(String[]::new),
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static List<JsonNode> pushResults(Run run) throws Exception {
        List<JsonNode> out = new ArrayList<>();
        for (JsonNode doc : run.docs()) {
            for (JsonNode frame : doc.path("frames")) {
                if (frame.has("results") && frame.has("clientCommitId")) {
                    out.add(frame);
                }
            }
        }
        return out;
    }

    private SyncTestClient reader() {
        return new SyncTestClient(
                        SyncScenariosContract.SCHEMA,
                        new HttpTransport("http://localhost:" + port, partition),
                        "bob",
                        "bob-" + UUID.randomUUID())
                .subscribe("notes", "notes", Map.of("project_id", List.of("p1")))
                .subscribe("comments", "comments", Map.of("project_id", List.of("p1")));
    }

    @Test
    void oneCommitWritesRowsOfTwoTables() throws Exception {
        Run push = cli(
                "a.json",
                "push",
                "[{\"$table\":\"notes\",\"id\":\"n1\",\"project_id\":\"p1\",\"title\":\"milk\","
                        + "\"body\":null,\"priority\":1,\"done\":false},"
                        + "{\"$table\":\"comments\",\"id\":\"c1\",\"project_id\":\"p1\",\"note_id\":\"n1\",\"text\":\"2 litres\"}]");
        assertEquals(0, push.exit(), push.err() + push.out());
        List<JsonNode> results = pushResults(push);
        assertEquals(1, results.size(), "one commit: " + push.out());
        assertEquals(2, results.get(0).path("results").size(), results.get(0).toString());
        for (JsonNode r : results.get(0).path("results")) {
            assertEquals("applied", r.path("status").asText(), r.toString());
        }

        SyncTestClient bob = reader();
        bob.syncUntilIdle();
        assertEquals("milk", bob.table("notes").get("n1").values()[2]);
        assertEquals("2 litres", bob.table("comments").get("c1").values()[3]);

        Run missing = cli("a.json", "push", "[{\"id\":\"n2\",\"project_id\":\"p1\"}]");
        assertEquals(SyncularCli.LOCAL_ERROR, missing.exit());
        assertTrue(missing.err().contains("\"$table\""), missing.err());
        Run unknown = cli("a.json", "push", "{\"$table\":\"nope\",\"id\":\"x\"}");
        assertEquals(SyncularCli.LOCAL_ERROR, unknown.exit());
        assertTrue(unknown.err().contains("no table \"nope\""), unknown.err());
    }

    @Test
    void decodePrintsAConflictsServerRowAndColumnsByName() throws Exception {
        Run first = cli(
                "a.json",
                "push",
                "notes",
                "{\"id\":\"n1\",\"project_id\":\"p1\",\"title\":\"milk\",\"body\":null,"
                        + "\"priority\":1,\"done\":false}");
        assertEquals(0, first.exit(), first.err() + first.out());
        Run second = cli("a.json", "push", "notes", "{\"id\":\"n1\",\"title\":\"oat milk\",\"$baseVersion\":1}");
        assertEquals(0, second.exit(), second.err() + second.out());

        // another writer still at version 1 edits the same column
        Run stale =
                cli("b.json", "--decode", "push", "notes", "{\"id\":\"n1\",\"title\":\"soy milk\",\"$baseVersion\":1}");
        assertEquals(0, stale.exit(), stale.err() + stale.out());
        JsonNode conflict = null;
        for (JsonNode doc : stale.docs()) {
            if (doc.has("conflict")) {
                conflict = doc.get("conflict");
            }
        }
        assertNotNull(conflict, stale.out());
        assertEquals("notes", conflict.path("table").asText());
        assertEquals("n1", conflict.path("rowId").asText());
        assertEquals(0, conflict.path("opIndex").asInt());
        assertEquals(2, conflict.path("serverVersion").asLong());
        assertEquals("oat milk", conflict.path("serverRow").path("title").asText(), conflict.toString());
        assertEquals("p1", conflict.path("serverRow").path("project_id").asText());
        assertEquals(1, conflict.path("serverRow").path("priority").asLong());
        assertEquals(List.of("title"), JSON.convertValue(conflict.path("conflictColumns"), List.class));
    }

    /** Output that completes {@link #seen} once it contains {@code marker}. */
    static final class SignallingOut extends ByteArrayOutputStream {
        final CompletableFuture<Void> seen = new CompletableFuture<>();
        private final String marker;

        SignallingOut(String marker) {
            this.marker = marker;
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) {
            super.write(b, off, len);
            if (toString(StandardCharsets.UTF_8).contains(marker)) {
                seen.complete(null);
            }
        }
    }

    /**
     * {@code watch} (§8): after its pull the socket's {@code hello} is printed; a commit by another client then
     * arrives as a {@code 0x00} delta, printed with its decoded change, applied to the state file and acknowledged;
     * {@code --count 1} ends the command with status 0.
     */
    @Test
    void watchPrintsRealtimeDeltasAsTheyArrive() throws Exception {
        Run sub = cli("w.json", "subscribe", "n", "notes", "project_id=p1");
        assertEquals(0, sub.exit(), sub.err());
        SignallingOut out = new SignallingOut("\"hello\"");
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        String[] args = {
            "--url",
            "http://localhost:" + port,
            "--schema",
            SCHEMA,
            "--actor",
            "alice",
            "--partition",
            partition,
            "--state",
            dir.resolve("w.json").toString(),
            "--decode",
            "--count",
            "1",
            "watch"
        };
        CompletableFuture<Integer> watch = CompletableFuture.supplyAsync(() -> SyncularCli.run(
                args,
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8)));
        out.seen.get(30, TimeUnit.SECONDS);

        SyncTestClient bob = reader();
        bob.syncUntilIdle();
        Map<String, Object> row =
                new HashMap<>(Map.of("id", "n9", "project_id", "p1", "title", "from bob", "done", false));
        row.put("body", null);
        row.put("priority", null);
        String commit = bob.upsert("notes", row, null);
        bob.syncUntilIdle();
        assertEquals(CommitStatus.APPLIED, bob.result(commit).status());

        assertEquals(0, watch.get(30, TimeUnit.SECONDS), err.toString(StandardCharsets.UTF_8));
        JsonNode change = null;
        for (JsonNode doc : new Run(0, out.toString(StandardCharsets.UTF_8), "").docs()) {
            if (doc.has("values") && "n9".equals(doc.path("rowId").asText())) {
                change = doc;
            }
        }
        assertNotNull(change, out.toString(StandardCharsets.UTF_8));
        assertEquals("from bob", change.path("values").path("title").asText());
        JsonNode saved = JSON.readTree(dir.resolve("w.json").toFile());
        assertTrue(
                saved.toString()
                        .contains("\"cursor\":" + change.path("commitSeq").asLong()),
                "the delta moved the stored cursor: " + saved);
    }
}
