package dev.syncular.server.operations;

import static dev.syncular.server.operations.OperationsResourceTest.CT;
import static dev.syncular.server.operations.OperationsResourceTest.num;
import static dev.syncular.server.operations.OperationsResourceTest.obj;
import static dev.syncular.server.operations.OperationsResourceTest.plain;
import static dev.syncular.server.operations.OperationsResourceTest.str;
import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.cli.SyncularCli;
import dev.syncular.server.observability.OperationalEvents;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.testsupport.BlobHttp;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.OperationsAppProfile;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.SyncTestClient;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Registered commands (REMOTE.md §3, §5, §7) through {@code POST /operations} of the running app on PostgreSQL, with
 * the commands of {@link TestCommands}: applied, a retry answered {@code cached} without running again, a commit the
 * actor's scopes refuse stored and replayed as {@code rejected}, custom authorization, no mutations, a failing
 * command, and the command's commit arriving at an ordinary sync client's pull.
 */
@QuarkusTest
@OwnApp
@TestProfile(OperationsAppProfile.class)
class CommandsTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Inject
    SchemaWindow window;

    @Inject
    OperationalEvents events;

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    private final String partition = "cmd-" + UUID.randomUUID();

    static ObjectNode command(String operationId, String requestId, ObjectNode params) {
        return obj(
                "revision",
                num(1),
                "kind",
                str("command"),
                "clientId",
                str("cmd-client"),
                "operationId",
                str(operationId),
                "requestId",
                str(requestId),
                "params",
                params);
    }

    @SuppressWarnings("unchecked")
    Map<String, Object> call(String actor, JsonNode request) throws Exception {
        Response r = given().contentType(CT)
                .header("x-actor-id", actor)
                .header("x-syncular-partition", partition)
                .body(JSON.writeValueAsBytes(request))
                .post("/operations");
        assertEquals(200, r.statusCode(), r.asString());
        return (Map<String, Object>) plain(JSON.readTree(r.asByteArray()));
    }

    private SyncTestClient reader() {
        SyncTestClient c = new SyncTestClient(
                window.current(),
                new HttpTransport("http://localhost:" + port, partition),
                "reader",
                "reader-" + UUID.randomUUID());
        c.subscribe("s1", "todos", Map.of("list_id", List.of("l1")));
        return c;
    }

    private static ObjectNode rename(String id, String list, String title) {
        return obj("id", str(id), "list", str(list), "title", str(title));
    }

    @Test
    void appliedThenCachedWithoutRunningAgainAndTheCommitReachesSyncClients() throws Exception {
        SyncTestClient reader = reader();
        reader.syncUntilIdle();
        int runs = TestCommands.RenameTodo.RUNS.get();
        Map<String, Object> applied = call("alice", command("test.renameTodo", "r1", rename("t1", "l1", "first")));
        assertEquals("command", applied.get("kind"), applied.toString());
        assertEquals("applied", applied.get("status"), applied.toString());
        assertEquals("r1", applied.get("requestId"));
        double seq = (Double) applied.get("commitSeq");
        assertTrue(seq >= 1, applied.toString());
        assertEquals(runs + 1, TestCommands.RenameTodo.RUNS.get());

        // §3: an applied retry answers cached from the idempotency record, the command not run again
        Map<String, Object> retry = call("alice", command("test.renameTodo", "r1", rename("t1", "l1", "first")));
        assertEquals("cached", retry.get("status"), retry.toString());
        assertEquals(seq, retry.get("commitSeq"));
        assertEquals(runs + 1, TestCommands.RenameTodo.RUNS.get(), "a cached retry does not run the command");

        // the command read the stored row inside its transaction: a second request keeps the other columns
        Map<String, Object> second = call("alice", command("test.renameTodo", "r2", rename("t1", "l1", "second")));
        assertEquals("applied", second.get("status"), second.toString());

        // the commits reach an ordinary client's pull like any push
        reader.syncUntilIdle();
        assertEquals(
                "second",
                reader.table("todos")
                        .get("t1")
                        .values()[window.current().table("todos").columnIndex("title")]);
    }

    @Test
    void aCommitTheScopesRefuseIsStoredAndReplaysRejected() throws Exception {
        // dev auth grants list_id l1 and l2 only (the profile): a row in l9 is refused by §3.4 scope authorization
        Map<String, Object> rejected = call("alice", command("test.renameTodo", "r-out", rename("t9", "l9", "x")));
        assertEquals("rejected", rejected.get("status"), rejected.toString());
        assertNull(rejected.get("commitSeq"));
        @SuppressWarnings("unchecked")
        Map<String, Object> result = ((List<Map<String, Object>>) rejected.get("results")).get(0);
        assertEquals("error", result.get("status"), result.toString());
        int runs = TestCommands.RenameTodo.RUNS.get();
        Map<String, Object> replay = call("alice", command("test.renameTodo", "r-out", rename("t9", "l9", "x")));
        assertEquals("rejected", replay.get("status"), replay.toString());
        assertEquals(runs, TestCommands.RenameTodo.RUNS.get(), "a stored rejection replays without running");
    }

    /**
     * §5.9.6 / §6.6 for commands: a mutation referencing a blob meets the push's blob check — a blob the actor
     * uploaded is accepted, one never uploaded (or uploaded only by another actor, §5.9.5) is a stored
     * {@code blob.not_found} rejection, and nothing of it is written.
     */
    @Test
    void commandBlobReferencesMeetThePushBlobCheck() throws Exception {
        byte[] bytes = ("attachment of " + partition).getBytes(java.nio.charset.StandardCharsets.UTF_8);
        String blobId = "sha256:"
                + java.util.HexFormat.of()
                        .formatHex(java.security.MessageDigest.getInstance("SHA-256")
                                .digest(bytes));
        BlobHttp blobs = new BlobHttp("http://localhost:" + port, partition);
        assertEquals(200, blobs.put("alice", blobId, bytes).statusCode());
        String ref = "{\"blobId\":\"" + blobId + "\",\"byteLength\":" + bytes.length
                + ",\"mediaType\":\"text/plain\",\"name\":\"a.txt\"}";
        String missing = "{\"blobId\":\"sha256:" + "0".repeat(64)
                + "\",\"byteLength\":1,\"mediaType\":\"text/plain\",\"name\":\"b.txt\"}";

        // bob did not upload it and no row he sees references it yet (§5.9.5); the other blob was never uploaded
        refused("bob", "b2", ref);
        refused("alice", "b3", missing);
        Map<String, Object> applied = call(
                "alice",
                command("test.attach", "b1", obj("id", str("t-att"), "list", str("l1"), "attachment", str(ref))));
        assertEquals("applied", applied.get("status"), applied.toString());

        SyncTestClient reader = reader();
        reader.syncUntilIdle();
        assertEquals(Set.of("t-att"), reader.table("todos").keySet());
        assertEquals(
                ref,
                reader.table("todos")
                        .get("t-att")
                        .values()[window.current().table("todos").columnIndex("attachment")]);
    }

    private void refused(String actor, String requestId, String attachment) throws Exception {
        Map<String, Object> r = call(
                actor,
                command(
                        "test.attach",
                        requestId,
                        obj("id", str("t-" + requestId), "list", str("l1"), "attachment", str(attachment))));
        assertEquals("rejected", r.get("status"), r.toString());
        @SuppressWarnings("unchecked")
        Map<String, Object> result = ((List<Map<String, Object>>) r.get("results")).get(0);
        assertEquals("blob.not_found", result.get("code"), result.toString());
    }

    /** Declared commands (docs/OPERATIONS.md): an image without Java code offers updates, upserts and deletes. */
    @Test
    void declaredCommandsWriteOneRowByParams() throws Exception {
        SyncTestClient reader = reader();
        reader.syncUntilIdle();
        Map<String, Object> created = call(
                "alice",
                command(
                        "todos.create",
                        "d1",
                        obj("id", str("d-1"), "list", str("l1"), "title", str("declared"), "position", num(3))));
        assertEquals("applied", created.get("status"), created.toString());
        OperationsResourceTest.assertError(
                call(
                        "bob",
                        command(
                                "todos.create",
                                "d2",
                                obj("id", str("d-2"), "list", str("l1"), "title", str("x"), "position", num(1)))),
                "operation.forbidden");
        Map<String, Object> done = call("bob", command("todos.complete", "d3", obj("id", str("d-1"))));
        assertEquals("applied", done.get("status"), done.toString());
        OperationsResourceTest.assertError(
                call("bob", command("todos.complete", "d4", obj("id", str("nope")))), "operation.invalid_request");
        OperationsResourceTest.assertError(
                call("alice", command("todos.create", "d5", obj("id", str("d-5")))), "operation.invalid_request");
        reader.syncUntilIdle();
        SyncTestClient.LocalRow row = reader.table("todos").get("d-1");
        TableSchema todos = window.current().table("todos");
        assertEquals("declared", row.values()[todos.columnIndex("title")]);
        assertEquals(true, row.values()[todos.columnIndex("done")]);
        assertEquals(3L, row.values()[todos.columnIndex("position")]);
        assertEquals(
                "applied",
                call("alice", command("todos.remove", "d6", obj("id", str("d-1"))))
                        .get("status"));
        reader.syncUntilIdle();
        assertFalse(reader.table("todos").containsKey("d-1"));
    }

    /** The CLI's {@code command} and {@code query} against the same server: plain JSON in and out, exit status. */
    @Test
    void theCliRunsCommandsAndQueries(@TempDir Path dir) throws Exception {
        String url = "http://localhost:" + port;
        Path state = dir.resolve("state.json");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = SyncularCli.run(
                new String[] {
                    "--url=" + url,
                    "--actor",
                    "alice",
                    "--partition",
                    partition,
                    "--state",
                    state.toString(),
                    "command",
                    "test.renameTodo",
                    "cli-1",
                    "{\"id\":\"c1\",\"list\":\"l1\",\"title\":\"from the cli\"}"
                },
                new PrintStream(out),
                new PrintStream(err));
        assertEquals(0, status, err.toString());
        JsonNode applied = JSON.readTree(out.toString());
        assertEquals("applied", applied.path("status").asText(), applied.toString());
        assertTrue(applied.path("commitSeq").asLong() >= 1, applied.toString());

        out.reset();
        status = SyncularCli.run(
                new String[] {
                    "--url",
                    url,
                    "--actor",
                    "reader",
                    "--partition",
                    partition,
                    "--state",
                    state.toString(),
                    "query",
                    OperationsResourceTest.FIXTURE_ID,
                    "{\"listId\":\"l1\"}"
                },
                new PrintStream(out),
                new PrintStream(err));
        assertEquals(0, status, err.toString());
        JsonNode rows = JSON.readTree(out.toString()).path("rows");
        assertEquals(1, rows.size(), out.toString());
        assertEquals("from the cli", rows.get(0).path("title").asText(), rows.toString());

        out.reset();
        status = SyncularCli.run(
                new String[] {
                    "--url",
                    url,
                    "--actor",
                    "alice",
                    "--partition",
                    partition,
                    "--state",
                    state.toString(),
                    "command",
                    "test.nothing",
                    "cli-2"
                },
                new PrintStream(out),
                new PrintStream(err));
        assertEquals(SyncularCli.SERVER_REFUSED, status);
        assertEquals(
                "operation.invalid_request",
                JSON.readTree(out.toString()).path("code").asText(),
                out.toString());
    }

    @Test
    void refusalsAreAnsweredPreciselyAndNothingIsApplied() throws Exception {
        SyncTestClient reader = reader();
        reader.syncUntilIdle();
        OperationsResourceTest.assertError(
                call("mallory", command("test.renameTodo", "m1", rename("m1", "l1", "x"))), "operation.forbidden");
        // the admin event tail (GET /admin/events) names the failure, its operation and partition
        assertTrue(
                events.tail(50).stream()
                        .anyMatch(e -> e.kind().equals(OperationalEvents.OPERATION_FAILED)
                                && "operation.forbidden".equals(e.code())
                                && partition.equals(e.partition())
                                && "test.renameTodo".equals(e.details().get("operation"))
                                && "http".equals(e.details().get("binding"))),
                events.tail(50).toString());
        OperationsResourceTest.assertError(
                call("alice", command("test.nothing", "n1", obj())), "operation.invalid_request");
        Map<String, Object> boom = call("alice", command("test.boom", "b1", obj()));
        OperationsResourceTest.assertError(boom, "operation.execution_failed");
        assertFalse(boom.toString().contains("7f3c"), "the command's message is never answered: " + boom);
        OperationsResourceTest.assertError(call("alice", command("test.unknown", "u1", obj())), "operation.unknown");
        OperationsResourceTest.assertError(
                call("alice", command("test.renameTodo", "", rename("e", "l1", "x"))), "operation.invalid_request");
        // a failed command left no idempotency record: the same request id runs (and fails) again
        OperationsResourceTest.assertError(
                call("alice", command("test.boom", "b1", obj())), "operation.execution_failed");
        reader.syncUntilIdle();
        assertTrue(reader.table("todos").isEmpty(), "nothing applied: " + reader.table("todos"));
    }
}
