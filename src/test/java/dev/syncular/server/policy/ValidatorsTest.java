package dev.syncular.server.policy;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.NotesAppProfile;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.CommitStatus;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.OpResult;
import dev.syncular.server.wire.PushCommit;
import dev.syncular.server.wire.PushResult;
import dev.syncular.server.wire.PushResultDetails;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * §6.7 row validators and §6.8 whole-commit validators through the running app, installed as the conformance
 * catalog installs them ({@code installValidators}, {@code installCommitValidator}: the declarative rules of
 * {@link PolicyDocument}), driven by a client over real HTTP rounds; storage is read back through
 * {@code readRows}.
 */
@QuarkusTest
@TestProfile(NotesAppProfile.class)
class ValidatorsTest {
    static final String TASKS = "{\"version\":1,\"tables\":[{\"name\":\"tasks\",\"primaryKey\":\"id\",\"columns\":["
            + "{\"name\":\"id\",\"type\":\"string\",\"nullable\":false},"
            + "{\"name\":\"project_id\",\"type\":\"string\",\"nullable\":false},"
            + "{\"name\":\"title\",\"type\":\"string\",\"nullable\":false},"
            + "{\"name\":\"done\",\"type\":\"boolean\",\"nullable\":false}],\"scopes\":[\"project:{project_id}\"]}]}";
    static final String MAX_LENGTH = "[{\"table\":\"tasks\",\"rule\":{\"kind\":\"maxLength\",\"column\":\"title\","
            + "\"max\":10,\"code\":\"app.title_too_long\"}}]";

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    private static String create(String partition) {
        String id = given().contentType("application/json")
                .body("{\"schema\":" + TASKS + ",\"partition\":\"" + partition + "\",\"nowMs\":1000000}")
                .post("/__conformance/instances")
                .then()
                .statusCode(200)
                .extract()
                .path("id");
        call(id, "setAllowedScopes", "[\"alice\",{\"project_id\":[\"p1\"]}]");
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

    private SyncTestClient client(String id) {
        CompiledSchema schema = SchemaLoader.parse(TASKS);
        SyncTestClient c = new SyncTestClient(
                        schema,
                        new HttpTransport("http://localhost:" + port + "/__conformance/instances/" + id, null),
                        "alice",
                        "alice-client")
                .subscribe("s", "tasks", Map.of("project_id", List.of("p1")));
        c.syncUntilIdle();
        return c;
    }

    private static Map<String, Object> task(String id, String title, boolean done) {
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("id", id);
        v.put("project_id", "p1");
        v.put("title", title);
        v.put("done", done);
        return v;
    }

    private static List<Object> titles(String id) {
        return call(id, "readRows", "[\"tasks\"]").getList("result.values.title");
    }

    /** The push result of the commit and the §6.3.1 details that followed it in the response, if any. */
    private static PushResult result(Message m) {
        return m.frames().stream()
                .filter(f -> f instanceof PushResult)
                .map(f -> (PushResult) f)
                .findFirst()
                .orElseThrow();
    }

    private static String details(Message m) {
        return m.frames().stream()
                .filter(f -> f instanceof PushResultDetails)
                .map(f -> ((PushResultDetails) f).entries().get(0).detailsJson())
                .findFirst()
                .orElse(null);
    }

    @Test
    void rowValidatorRejectionRollsTheWholeCommitBackWithTheHostCode() {
        String id = create("validators-reject");
        call(id, "installValidators", "[" + MAX_LENGTH + "]");
        SyncTestClient alice = client(id);
        alice.upsert("tasks", task("existing", "accepted", false), null);
        alice.syncUntilIdle();

        // §6.4: a too-long update and a valid sibling insert in one commit — both roll back
        alice.commit(List.of(
                alice.upsertOp("tasks", task("existing", "this title is far too long", false), null),
                alice.upsertOp("tasks", task("sibling", "ok", false), null)));
        PushCommit rejected = alice.outbox.get(0);
        Message m = alice.sync();
        PushResult r = result(m);
        assertEquals(CommitStatus.REJECTED, r.status());
        OpResult.Error e = (OpResult.Error) r.results().get(0);
        assertEquals("app.title_too_long", e.code());
        assertEquals(0, e.opIndex());
        assertFalse(e.retryable());
        assertEquals(
                "{\"fieldPaths\":[\"title\"],\"reason\":\"max_length_exceeded\",\"requiredAction\":\"edit_fields\"}",
                details(m));
        assertEquals(List.of("accepted"), titles(id));

        // a replay of the rejected commit returns the persisted result and details unchanged (§2.3)
        alice.outbox.add(rejected);
        Message replay = alice.sync();
        assertEquals(
                "app.title_too_long", ((OpResult.Error) result(replay).results().get(0)).code());
        assertEquals(details(m), details(replay));
    }

    @Test
    void acceptedWritesApplyAndNoValidatorMeansNoValidation() {
        String id = create("validators-accept");
        call(id, "installValidators", "[" + MAX_LENGTH + "]");
        SyncTestClient alice = client(id);
        alice.upsert("tasks", task("ok1", "short", false), null);
        Message m = alice.sync();
        assertEquals(CommitStatus.APPLIED, result(m).status());

        call(id, "installValidators", "[[]]"); // §6.7: off is exactly the server without the feature
        alice.upsert("tasks", task("long", "a very long title that would fail the rule", false), null);
        assertEquals(CommitStatus.APPLIED, result(alice.sync()).status());
        assertEquals(List.of("a very long title that would fail the rule", "short"), titles(id));
    }

    @Test
    void immutableWhenReadsTheStoredRow() {
        String id = create("validators-stored");
        call(
                id,
                "installValidators",
                "[[{\"table\":\"tasks\",\"rule\":{\"immutableWhen\":{\"column\":\"title\","
                        + "\"guardColumn\":\"done\",\"guardValue\":true,\"code\":\"app.done_task_frozen\"}}}]]");
        SyncTestClient alice = client(id);
        alice.upsert("tasks", task("t1", "first", false), null);
        assertEquals(CommitStatus.APPLIED, result(alice.sync()).status()); // insert: no stored row
        alice.upsert("tasks", task("t1", "first", true), null);
        assertEquals(CommitStatus.APPLIED, result(alice.sync()).status()); // title unchanged while done flips

        alice.upsert("tasks", task("t1", "renamed", true), null);
        PushResult r = result(alice.sync());
        assertEquals(CommitStatus.REJECTED, r.status());
        assertEquals("app.done_task_frozen", ((OpResult.Error) r.results().get(0)).code());
        JsonPath rows = call(id, "readRows", "[\"tasks\"]");
        assertEquals(List.of("first"), rows.getList("result.values.title"));
        assertEquals(List.of(true), rows.getList("result.values.done"));
    }

    @Test
    void commitValidatorRequiresTheSiblingAndSeesTheWholeCommit() {
        String id = create("commit-validators");
        call(
                id,
                "installCommitValidator",
                "[{\"kind\":\"requireSiblingWhen\",\"table\":\"tasks\",\"column\":\"done\","
                        + "\"equals\":true,\"siblingRowIdSuffix\":\"-audit\",\"code\":\"app.completion_audit_required\"}]");
        SyncTestClient alice = client(id);

        alice.commit(List.of(
                alice.upsertOp("tasks", task("t1", "completed", true), null),
                alice.upsertOp("tasks", task("ordinary", "ordinary", false), null)));
        Message m = alice.sync();
        PushResult r = result(m);
        assertEquals(CommitStatus.REJECTED, r.status());
        OpResult.Error e = (OpResult.Error) r.results().get(0);
        assertEquals("app.completion_audit_required", e.code());
        assertEquals(0, e.opIndex());
        assertFalse(e.retryable());
        assertEquals(
                "{\"fieldPaths\":[\"done\"],\"reason\":\"missing_sibling_operation\","
                        + "\"requiredAction\":\"repair_aggregate\"}",
                details(m));
        assertEquals(List.of(), titles(id)); // every candidate row rolled back

        // the sibling may come first: the validator sees the final candidate state of the whole commit
        alice.commit(List.of(
                alice.upsertOp("tasks", task("t2-audit", "audit", false), null),
                alice.upsertOp("tasks", task("t2", "completed", true), null)));
        assertEquals(CommitStatus.APPLIED, result(alice.sync()).status());
        assertEquals(
                List.of("t2", "t2-audit"), call(id, "readRows", "[\"tasks\"]").getList("result.rowId"));
        assertNull(details(alice.lastResponse));
    }

    @Test
    void malformedRulesAreRefusedAndTheCapabilitiesListBothSeams() {
        String id = create("validators-bad");
        given().contentType("application/json")
                .body(
                        "{\"args\":[[{\"table\":\"tasks\",\"rule\":{\"maxLength\":{\"column\":\"nope\",\"max\":3,\"code\":\"app.x\"}}}]]}")
                .post("/__conformance/instances/" + id + "/call/installValidators")
                .then()
                .statusCode(400)
                .body("code", equalTo("sync.invalid_request"));
        given().contentType("application/json")
                .body(
                        "{\"args\":[[{\"table\":\"tasks\",\"rule\":{\"maxLength\":{\"column\":\"title\",\"max\":3,\"code\":\"sync.mine\"}}}]]}")
                .post("/__conformance/instances/" + id + "/call/installValidators")
                .then()
                .statusCode(400)
                .body("code", equalTo("sync.invalid_request"));
        List<String> caps = given().get("/__conformance/capabilities")
                .then()
                .statusCode(200)
                .extract()
                .path("capabilities");
        assertTrue(caps.containsAll(List.of("validators", "commit-validators")));
    }
}
