package dev.syncular.server.conformance;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.syncular.server.cli.SyncularCli;
import dev.syncular.server.crdt.yjs.YjsDocMerger;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.testsupport.Concurrently;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.NotesAppProfile;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.YjsFixtures;
import dev.syncular.server.wire.CommitStatus;
import dev.syncular.server.wire.OpResult;
import dev.syncular.server.wire.PushCommit;
import dev.syncular.server.wire.PushResult;
import dev.syncular.server.wire.RowCodec;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * CRDT columns end to end (§5.10, Appendix B scenario 14) through the running app's conformance host with
 * the production merger registry: Yjs updates recorded from Yjs 13.6.33 are pushed as SSP2 by several
 * clients, and what the server stores and serves is compared, byte for byte, with what the reference merger
 * stores (each push applied with the stored state to a fresh {@code Y.Doc}, {@code Y.encodeStateAsUpdate}).
 */
@QuarkusTest
@TestProfile(NotesAppProfile.class)
class CrdtColumnsTest {
    static final String NOTES = "{\"version\":1,\"tables\":[{\"name\":\"notes\",\"primaryKey\":\"id\",\"columns\":["
            + "{\"name\":\"id\",\"type\":\"string\",\"nullable\":false},"
            + "{\"name\":\"project_id\",\"type\":\"string\",\"nullable\":false},"
            + "{\"name\":\"title\",\"type\":\"string\",\"nullable\":false},"
            + "{\"name\":\"doc\",\"type\":\"crdt\",\"nullable\":true,\"crdtType\":\"yjs-doc\"}],"
            + "\"scopes\":[\"project:{project_id}\"]}]}";
    private static final int DOC = 3;
    private static final Map<String, List<String>> P1 = Map.of("project_id", List.of("p1"));
    private static final YjsDocMerger YJS = new YjsDocMerger();

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    private final List<String> instances = new ArrayList<>();

    /** Closing an instance drops its PostgreSQL schema. */
    @AfterEach
    void closeInstances() {
        instances.forEach(id -> call(id, "close", "[]"));
    }

    private String create(String schema, String partition) {
        String id = given().contentType("application/json")
                .body("{\"schema\":" + schema + ",\"partition\":\"" + partition + "\",\"nowMs\":1000000}")
                .post("/__conformance/instances")
                .then()
                .statusCode(200)
                .extract()
                .path("id");
        instances.add(id);
        return id;
    }

    private static JsonPath call(String id, String method, String args) {
        return given().contentType("application/json")
                .body("{\"args\":" + args + "}")
                .post("/__conformance/instances/" + id + "/call/" + method)
                .then()
                .statusCode(200)
                .extract()
                .jsonPath();
    }

    private SyncTestClient client(String id, String schemaJson, String actor) {
        call(id, "setAllowedScopes", "[\"" + actor + "\",{\"project_id\":[\"p1\"]}]");
        CompiledSchema schema = SchemaLoader.parse(schemaJson, Set.of("yjs-doc", "test-append"));
        return new SyncTestClient(
                        schema,
                        new HttpTransport("http://localhost:" + port + "/__conformance/instances/" + id, null),
                        actor,
                        actor + "-client")
                .subscribe("s", "notes", P1);
    }

    /** The stored row as the host reads it: {@code [version, doc bytes or null]}. */
    private static Object[] stored(String id, String rowId) {
        JsonPath rows = call(id, "readRows", "[\"notes\"]");
        List<Map<String, Object>> list = rows.getList("result");
        for (Map<String, Object> r : list) {
            if (rowId.equals(r.get("rowId"))) {
                @SuppressWarnings("unchecked")
                Map<String, Object> values = (Map<String, Object>) r.get("values");
                @SuppressWarnings("unchecked")
                Map<String, String> doc = (Map<String, String>) values.get("doc");
                return new Object[] {
                    ((Number) r.get("version")).longValue(),
                    doc == null ? null : HexFormat.of().parseHex(doc.get("$bytes"))
                };
            }
        }
        throw new AssertionError("no row " + rowId);
    }

    private static byte[] localDoc(SyncTestClient c, String rowId) {
        return (byte[]) c.table("notes").get(rowId).values()[DOC];
    }

    private static Map<String, Object> doc(String rowId, byte[] update) {
        return Map.of("id", rowId, "doc", update);
    }

    private static void assertApplied(SyncTestClient c, String commitId) {
        PushResult r = c.result(commitId);
        assertEquals(CommitStatus.APPLIED, r.status(), commitId);
        r.results().forEach(op -> assertInstanceOf(OpResult.Applied.class, op)); // never a version_conflict
    }

    @Test
    void capabilityIsListed() {
        given().get("/__conformance/capabilities").then().statusCode(200).body("capabilities", hasItem("crdt"));
    }

    /**
     * Appendix B.14 (a): crdt-only pushes without {@code baseVersion} all merge, and two servers that see them in
     * opposite orders store and serve the same bytes, the reference merger's (§5.10.2 commutativity); none
     * conflicts (b).
     */
    @Test
    void B14a_concurrentEditsConvergeOnTheSameBytesInEitherOrder() {
        JsonNode f = YjsFixtures.load("text-three-clients");
        Map<String, byte[]> u = YjsFixtures.inputs(f);
        byte[][] served = new byte[2][];
        List<List<String>> orders = List.of(List.of("seed", "a", "b", "c"), List.of("seed", "c", "b", "a"));
        for (int o = 0; o < 2; o++) {
            List<String> order = orders.get(o);
            String id = create(NOTES, "crdt-converge-" + o);
            SyncTestClient alice = client(id, NOTES, "alice");
            SyncTestClient bob = client(id, NOTES, "bob");
            SyncTestClient carol = client(id, NOTES, "carol");
            alice.upsert("notes", Map.of("id", "n1", "project_id", "p1", "title", "t", "doc", u.get("seed")), null);
            alice.syncUntilIdle();
            bob.syncUntilIdle();
            carol.syncUntilIdle();
            Map<String, SyncTestClient> by = Map.of("a", alice, "b", bob, "c", carol);
            for (String name : order.subList(1, 4)) { // each pushes its edit baseVersion-less (§5.10.3)
                SyncTestClient c = by.get(name);
                String commit = c.upsert("notes", doc("n1", u.get(name)), null);
                c.sync();
                assertApplied(c, commit);
            }
            for (SyncTestClient c : List.of(alice, bob, carol)) {
                c.syncUntilIdle();
            }
            JsonNode yjs = YjsFixtures.merge(f, order);
            byte[] expected = YjsFixtures.bytes(yjs.get("folded"));
            assertEquals(YjsFixtures.hex(expected), YjsFixtures.hex((byte[]) stored(id, "n1")[1]), "stored " + order);
            for (SyncTestClient c : List.of(alice, bob, carol)) {
                assertArrayEquals(expected, localDoc(c, "n1"), c.actorId + " pulled the merged bytes");
            }
            // ... which Yjs decodes to every edit, whichever order the server saw
            assertEquals("B: hello, world!", yjs.get("foldedContent").get("t").asText());
            served[o] = expected;
        }
        assertArrayEquals(served[0], served[1], "both orders store the same bytes");
    }

    /**
     * Appendix B.14 (b): three clients push their crdt updates at the same instant, baseVersion-less, on five rows:
     * every operation applies — a crdt column never conflicts on its own account (§5.10.3) — and each row stores
     * the reference merge of the order the server serialized them in.
     */
    @Test
    void B14b_racingCrdtPushesNeverConflict() throws Exception {
        JsonNode f = YjsFixtures.load("concurrent-same-position");
        Map<String, byte[]> u = YjsFixtures.inputs(f);
        String id = create(NOTES, "crdt-race");
        SyncTestClient alice = client(id, NOTES, "alice");
        SyncTestClient bob = client(id, NOTES, "bob");
        SyncTestClient carol = client(id, NOTES, "carol");
        List<SyncTestClient> all = List.of(alice, bob, carol);
        List<String> names = List.of("a", "b", "c");
        for (int row = 0; row < 5; row++) {
            String rowId = "race-" + row;
            alice.upsert("notes", Map.of("id", rowId, "project_id", "p1", "title", "t", "doc", u.get("seed")), null);
            alice.syncUntilIdle();
            all.forEach(SyncTestClient::syncUntilIdle);
            List<String> commits = new ArrayList<>();
            for (int k = 0; k < 3; k++) {
                commits.add(all.get(k).upsert("notes", doc(rowId, u.get(names.get(k))), null));
            }
            Concurrently.run(3, k -> all.get(k).sync());
            List<String> order = new ArrayList<>(List.of("seed"));
            List<Integer> byCommit = new ArrayList<>(List.of(0, 1, 2));
            for (int k = 0; k < 3; k++) {
                assertApplied(all.get(k), commits.get(k));
            }
            byCommit.sort((x, y) -> Long.compare(
                    all.get(x).result(commits.get(x)).commitSeq(),
                    all.get(y).result(commits.get(y)).commitSeq()));
            byCommit.forEach(k -> order.add(names.get(k)));
            byte[] expected = YjsFixtures.bytes(YjsFixtures.merge(f, order).get("folded"));
            assertEquals(YjsFixtures.hex(expected), YjsFixtures.hex((byte[]) stored(id, rowId)[1]), "order " + order);
            assertEquals(4L, stored(id, rowId)[0]);
        }
    }

    /**
     * Appendix B.21 (d) (§5.10.3, §6.2 step 5): a crdt-only patch carrying a stale {@code baseVersion} applies clean
     * while a concurrent non-crdt patch from the same base applies too — crdt columns are excluded from the version
     * comparison and merge on every clean apply. Raced at once, then once more two versions behind.
     */
    @Test
    void B21d_crdtOnlyPatchWithAStaleBaseAppliesBesideAConcurrentNonCrdtPatch() throws Exception {
        JsonNode f = YjsFixtures.load("text-three-clients");
        Map<String, byte[]> u = YjsFixtures.inputs(f);
        String id = create(NOTES, "crdt-stale-base");
        SyncTestClient alice = client(id, NOTES, "alice");
        SyncTestClient bob = client(id, NOTES, "bob");
        alice.upsert("notes", Map.of("id", "n9", "project_id", "p1", "title", "first", "doc", u.get("seed")), null);
        alice.syncUntilIdle();
        bob.syncUntilIdle();
        long base = bob.table("notes").get("n9").version();
        String title = alice.upsert("notes", Map.of("id", "n9", "title", "alice's title"), base);
        String crdt = bob.upsert("notes", doc("n9", u.get("a")), base);
        List<SyncTestClient> both = List.of(alice, bob);
        Concurrently.run(2, k -> both.get(k).sync());
        assertApplied(alice, title);
        assertApplied(bob, crdt);
        String stale = bob.upsert("notes", doc("n9", u.get("b")), base);
        bob.sync();
        assertApplied(bob, stale);
        Object[] row = stored(id, "n9");
        assertEquals(base + 3, row[0]);
        byte[] merged = YJS.merge(YJS.merge(YJS.merge(null, u.get("seed")), u.get("a")), u.get("b"));
        assertArrayEquals(merged, (byte[]) row[1]);
        assertEquals("alice's title", call(id, "readRows", "[\"notes\"]").getString("result[0].values.title"));
        alice.syncUntilIdle();
        bob.syncUntilIdle();
        assertArrayEquals(localDoc(alice, "n9"), localDoc(bob, "n9"));
    }

    /**
     * Appendix B.14 (c): a conflict on a non-crdt column still fires; no merge is applied for the loser, whose
     * {@code serverRow} carries the winner's merged crdt state; after rebasing both edits are in.
     */
    @Test
    void B14c_nonCrdtConflictStillFiresWithTheMergedStateInServerRow() {
        JsonNode f = YjsFixtures.load("map-edits");
        Map<String, byte[]> u = YjsFixtures.inputs(f);
        String id = create(NOTES, "crdt-conflict");
        SyncTestClient alice = client(id, NOTES, "alice");
        SyncTestClient bob = client(id, NOTES, "bob");
        alice.upsert("notes", Map.of("id", "n2", "project_id", "p1", "title", "first", "doc", u.get("a1")), null);
        alice.syncUntilIdle();
        bob.syncUntilIdle();
        long base = bob.table("notes").get("n2").version();

        String won = alice.upsert("notes", Map.of("id", "n2", "title", "alice", "doc", u.get("a2")), base);
        alice.sync();
        assertApplied(alice, won);
        Object[] afterWin = stored(id, "n2");
        byte[] merged = YJS.merge(YJS.merge(null, u.get("a1")), u.get("a2"));
        assertArrayEquals(merged, (byte[]) afterWin[1]);

        String lost = bob.upsert("notes", Map.of("id", "n2", "title", "bob", "doc", u.get("b")), base);
        bob.sync();
        PushResult rejected = bob.result(lost);
        assertEquals(CommitStatus.REJECTED, rejected.status());
        OpResult.Conflict conflict =
                assertInstanceOf(OpResult.Conflict.class, rejected.results().get(0));
        assertEquals("sync.version_conflict", conflict.code());
        Object[] serverRow =
                new RowCodec(SchemaLoader.parse(NOTES).table("notes").rowLayout()).decode(conflict.serverRow());
        assertEquals("alice", serverRow[2]);
        assertArrayEquals(merged, (byte[]) serverRow[DOC], "serverRow carries the current merged crdt state");
        Object[] afterReject = stored(id, "n2");
        assertEquals(afterWin[0], afterReject[0], "no write");
        assertArrayEquals(merged, (byte[]) afterReject[1], "no merge of the rejected update");

        // §6.5 rebase: keep the local title over the server's version; the crdt update merges now
        bob.outbox.clear();
        String rebased =
                bob.upsert("notes", Map.of("id", "n2", "title", "bob", "doc", u.get("b")), conflict.serverVersion());
        bob.syncUntilIdle();
        assertApplied(bob, rebased);
        alice.syncUntilIdle();
        JsonNode yjs = YjsFixtures.merge(f, List.of("a1", "a2", "b"));
        assertEquals(YjsFixtures.hex(YjsFixtures.bytes(yjs.get("folded"))), YjsFixtures.hex(localDoc(alice, "n2")));
        assertArrayEquals(localDoc(alice, "n2"), localDoc(bob, "n2"));
        assertEquals("final", yjs.get("foldedContent").get("m").get("title").asText());
        assertEquals(43, yjs.get("foldedContent").get("m").get("count").asInt());
    }

    /**
     * Appendix B.14 (d): an offline client replays its outbox FIFO; a dropped-ack retry of the same commit answers
     * {@code cached} and is not merged again (§2.3, §5.10.3).
     */
    @Test
    void B14d_offlineReplayConvergesAndARetryIsCachedNotReMerged() {
        JsonNode f = YjsFixtures.load("offline-replay");
        Map<String, byte[]> u = YjsFixtures.inputs(f);
        String id = create(NOTES, "crdt-offline");
        SyncTestClient alice = client(id, NOTES, "alice");
        SyncTestClient bob = client(id, NOTES, "bob");
        alice.upsert("notes", Map.of("id", "n3", "project_id", "p1", "title", "t", "doc", u.get("seed")), null);
        alice.syncUntilIdle();
        bob.syncUntilIdle();
        // alice is offline: three edits wait in her outbox while bob's edit lands
        String o1 = alice.upsert("notes", doc("n3", u.get("o1")), null);
        alice.upsert("notes", doc("n3", u.get("o2")), null);
        alice.upsert("notes", doc("n3", u.get("o3")), null);
        PushCommit first = alice.outbox.get(0);
        bob.upsert("notes", doc("n3", u.get("online")), null);
        bob.syncUntilIdle();
        alice.syncUntilIdle(); // reconnect: replay FIFO
        bob.syncUntilIdle();
        JsonNode yjs = YjsFixtures.merge(f, List.of("seed", "online", "o1", "o2", "o3", "dup1"));
        byte[] expected = YjsFixtures.bytes(yjs.get("folded")); // dup1 is o1 again: no change in state
        assertEquals("> shared one two three", yjs.get("foldedContent").get("t").asText());
        Object[] before = stored(id, "n3");
        assertEquals(YjsFixtures.hex(expected), YjsFixtures.hex((byte[]) before[1]));
        long maxSeq = call(id, "getMaxCommitSeq", "[]").getLong("result");

        alice.outbox.add(first); // the ack of o1 was lost: the same commit again
        alice.sync();
        assertEquals(CommitStatus.CACHED, alice.result(o1).status());
        Object[] after = stored(id, "n3");
        assertEquals(before[0], after[0], "not merged again: no new row version");
        assertArrayEquals((byte[]) before[1], (byte[]) after[1]);
        assertEquals(maxSeq, call(id, "getMaxCommitSeq", "[]").getLong("result"), "no new commit");
        alice.syncUntilIdle();
        assertArrayEquals(expected, localDoc(alice, "n3"));
        assertArrayEquals(expected, localDoc(bob, "n3"));
    }

    /** §5.10.2: bytes the merger cannot read fail the operation with sync.crdt_merge_failed; storage is unchanged. */
    @Test
    void malformedUpdateFailsWithCrdtMergeFailedAndLeavesStorage() {
        Map<String, byte[]> u = YjsFixtures.inputs(YjsFixtures.load("text-keystrokes"));
        String id = create(NOTES, "crdt-malformed");
        SyncTestClient alice = client(id, NOTES, "alice");
        alice.upsert("notes", Map.of("id", "n4", "project_id", "p1", "title", "t", "doc", u.get("a0")), null);
        alice.syncUntilIdle();
        Object[] before = stored(id, "n4");
        long maxSeq = call(id, "getMaxCommitSeq", "[]").getLong("result");
        byte[] good = u.get("a1");
        byte[] truncated = Arrays.copyOf(good, good.length - 1);
        String bad = alice.commit(List.of(
                alice.upsertOp("notes", Map.of("id", "n4", "title", "renamed"), null),
                alice.upsertOp("notes", doc("n4", truncated), null)));
        alice.sync();
        PushResult r = alice.result(bad);
        assertEquals(CommitStatus.REJECTED, r.status());
        OpResult.Error error = assertInstanceOf(
                OpResult.Error.class, r.results().get(r.results().size() - 1));
        assertEquals("sync.crdt_merge_failed", error.code());
        assertEquals(false, error.retryable());
        Object[] after = stored(id, "n4");
        assertEquals(before[0], after[0]);
        assertArrayEquals((byte[]) before[1], (byte[]) after[1]);
        assertEquals(maxSeq, call(id, "getMaxCommitSeq", "[]").getLong("result"), "the whole commit rolled back");
        assertEquals("t", call(id, "readRows", "[\"notes\"]").getString("result[0].values.title"));
    }

    /**
     * The SPI: a CDI bean implementing {@code CrdtTypeMerger} (here {@link AppendCrdtMerger}) is in the registry,
     * so a schema naming its crdtType compiles and merges with it; an unregistered crdtType is refused (§5.10.1).
     */
    @Test
    void hostMergerBeansJoinTheRegistryAndUnknownTypesAreRefused() {
        String schema = NOTES.replace("yjs-doc", "test-append");
        String id = create(schema, "crdt-spi");
        SyncTestClient alice = client(id, schema, "alice");
        alice.upsert("notes", Map.of("id", "n5", "project_id", "p1", "title", "t", "doc", new byte[] {1, 2}), null);
        alice.upsert("notes", doc("n5", new byte[] {3}), null);
        alice.syncUntilIdle();
        assertArrayEquals(new byte[] {1, 2, 3}, (byte[]) stored(id, "n5")[1]);

        given().contentType("application/json")
                .body("{\"schema\":" + NOTES.replace("yjs-doc", "no-such-merger") + ",\"partition\":\"x\",\"nowMs\":1}")
                .post("/__conformance/instances")
                .then()
                .statusCode(400)
                .body("code", equalTo("sync.invalid_request"))
                .body("details.reason", equalTo("crdt_type_unknown"));
    }

    /** One in-process run of the command-line client: its exit status, stdout and stderr. */
    private record CliRun(int exit, String out, String err) {}

    private static CliRun cli(List<String> args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = SyncularCli.run(
                args.toArray(String[]::new),
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new CliRun(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /**
     * The command-line client compiles schemas against {@code yjs-doc} only, like a server without beans of its
     * own (§5.10.1): a schema naming the host's {@code test-append} is refused locally, naming the type and the
     * option; with {@code --crdt-types test-append} it compiles, and the CLI's pushes of that column (base64
     * bytes) are merged by the running server.
     */
    @Test
    void theCliAcceptsTheHostsOwnCrdtTypesWhenNamed(@TempDir Path dir) throws Exception {
        String schema = NOTES.replace("yjs-doc", "test-append");
        String id = create(schema, "crdt-cli");
        call(id, "setAllowedScopes", "[\"alice\",{\"project_id\":[\"p1\"]}]");
        Path file = dir.resolve("notes.syncular.ir.json");
        Files.writeString(file, schema);
        List<String> base = List.of(
                "--url",
                "http://localhost:" + port + "/__conformance/instances/" + id,
                "--schema",
                file.toString(),
                "--state",
                dir.resolve("alice.json").toString(),
                "--actor",
                "alice");

        CliRun refused = cli(concat(
                base, "push", "notes", "{\"id\":\"n1\",\"project_id\":\"p1\",\"title\":\"t\",\"doc\":\"AQI=\"}"));
        assertEquals(SyncularCli.LOCAL_ERROR, refused.exit(), refused.err());
        assertTrue(refused.err().contains("test-append") && refused.err().contains("--crdt-types"), refused.err());
        assertTrue(cli(List.of("--help")).out().contains("--crdt-types=<list>"));

        List<String> named = concat(base, "--crdt-types", "test-append");
        CliRun subscribed = cli(concat(named, "subscribe", "s", "notes", "project_id=p1"));
        assertEquals(0, subscribed.exit(), subscribed.err());
        CliRun first = cli(concat(
                named, "push", "notes", "{\"id\":\"n1\",\"project_id\":\"p1\",\"title\":\"t\",\"doc\":\"AQI=\"}"));
        assertEquals(0, first.exit(), first.err());
        CliRun second = cli(concat(named, "push", "notes", "{\"id\":\"n1\",\"doc\":\"Aw==\"}"));
        assertEquals(0, second.exit(), second.err());
        assertTrue(second.out().contains("\"status\" : \"applied\""), second.out());
        assertArrayEquals(new byte[] {1, 2, 3}, (byte[]) stored(id, "n1")[1], "merged by the host's test-append");
    }

    private static List<String> concat(List<String> base, String... more) {
        List<String> all = new ArrayList<>(base);
        all.addAll(List.of(more));
        return all;
    }
}
