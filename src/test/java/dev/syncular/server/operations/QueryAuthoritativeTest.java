package dev.syncular.server.operations;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestWebhook;
import dev.syncular.server.testsupport.WebhookResource;
import dev.syncular.server.wire.CommitStatus;
import dev.syncular.server.wire.OpResult;
import dev.syncular.server.wire.PushResult;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * SPEC §6.7 / §6.8 {@code queryAuthoritative} through {@code POST /sync} of the running app on PostgreSQL: a row
 * validator bean ({@link LockedListValidator}) that rejects when a registered query over the push transaction says
 * so, sees the rows staged earlier in the same commit (an upsert and a delete), never a row of another partition,
 * and gets REMOTE.md §7's failures (unknown query, invalid params, result too large, a failing statement) with
 * the push transaction still usable; and the validator webhook receiving declared query results as signed
 * evidence ({@code syncular.policy.validator-webhook.evidence}), per operation and per commit. The app is
 * {@link OperationWatchBackpressureTest}'s ({@link OperationWatchBackpressureTest.Profile}); every assertion here is
 * about this class's own partitions.
 */
@QuarkusTest
@OwnApp
@TestProfile(OperationWatchBackpressureTest.Profile.class)
class QueryAuthoritativeTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Inject
    SchemaWindow window;

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    private final String partitionA = "qa-a-" + UUID.randomUUID();
    private final String partitionB = "qa-b-" + UUID.randomUUID();

    @BeforeEach
    void reset() {
        WebhookResource.hook.reset();
    }

    private SyncTestClient client(String partition) {
        return new SyncTestClient(
                window.current(),
                new HttpTransport("http://localhost:" + port, partition),
                "writer",
                "writer-" + UUID.randomUUID());
    }

    private static Map<String, Object> todo(String id, String list, String title) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", id);
        m.put("list_id", list);
        m.put("title", title);
        m.put("done", false);
        m.put("position", 1L);
        m.put("updated_at_ms", 1_700_000_000_000L);
        m.put("attachment", null);
        return m;
    }

    private static Map<String, Object> note(String id, String list, String body) {
        return Map.of("id", id, "list_id", list, "body", body);
    }

    /** Pushes one commit of {@code ops} and returns its result. */
    private static PushResult push(SyncTestClient c, List<dev.syncular.server.wire.PushOperation> ops) {
        String id = c.commit(ops);
        c.syncUntilIdle();
        return c.result(id);
    }

    private static OpResult.Error rejection(PushResult r) {
        assertEquals(CommitStatus.REJECTED, r.status(), r.toString());
        return (OpResult.Error) r.results().get(r.results().size() - 1);
    }

    /** The rows a fresh reader bootstraps from {@code table} in {@code partition} for list l1: what storage holds. */
    private Map<String, SyncTestClient.LocalRow> stored(String partition, String table) {
        SyncTestClient reader = client(partition);
        reader.subscribe("s", table, Map.of("list_id", List.of("l1")));
        reader.syncUntilIdle();
        return reader.table(table);
    }

    @Test
    void aValidatorRejectsWhenTheQuerySaysSoAndPartitionsStayApart() {
        SyncTestClient b = client(partitionB);
        assertTrue(SyncTestClient.applied(push(b, List.of(b.upsertOp("notes", note("n1", "l1", "locked"), null)))));
        // partition B's lock is invisible to partition A's push: queryAuthoritative is bound to the pushing partition
        SyncTestClient a = client(partitionA);
        assertTrue(SyncTestClient.applied(push(a, List.of(a.upsertOp("todos", todo("t1", "l1", "milk"), null)))));
        // ... and binds B's own
        OpResult.Error e = rejection(push(b, List.of(b.upsertOp("todos", todo("t1", "l1", "milk"), null))));
        assertEquals("app.list_locked", e.code());
        assertEquals(0, e.opIndex());
        assertEquals(0, stored(partitionB, "todos").size());
        assertEquals(1, stored(partitionA, "todos").size());
        // another list of B is not locked
        assertTrue(SyncTestClient.applied(push(b, List.of(b.upsertOp("todos", todo("t2", "l2", "eggs"), null)))));
    }

    @Test
    void theQuerySeesTheRowsStagedBeforeItInTheSameCommit() {
        SyncTestClient a = client(partitionA);
        // a note staged at op 0 locks the list for the todo at op 1; the whole commit rolls back (§6.4)
        OpResult.Error e = rejection(push(
                a,
                List.of(
                        a.upsertOp("notes", note("n1", "l1", "locked"), null),
                        a.upsertOp("todos", todo("t1", "l1", "milk"), null))));
        assertEquals("app.list_locked", e.code());
        assertEquals(1, e.opIndex());
        assertEquals(0, stored(partitionA, "notes").size(), "the staged note was only ever read, never kept");

        assertTrue(SyncTestClient.applied(push(a, List.of(a.upsertOp("notes", note("n1", "l1", "locked"), null)))));
        // a staged delete of the lock is seen too: the todo after it applies
        PushResult r = push(
                a,
                List.of(SyncTestClient.deleteOp("notes", "n1"), a.upsertOp("todos", todo("t1", "l1", "milk"), null)));
        assertTrue(SyncTestClient.applied(r), r.toString());
        assertEquals(0, stored(partitionA, "notes").size());
        assertEquals(1, stored(partitionA, "todos").size());
    }

    @Test
    void failuresAreTheOperationCodesAndTheTransactionStaysUsable() {
        SyncTestClient a = client(partitionA);
        for (int i = 0; i < 3; i++) {
            assertTrue(SyncTestClient.applied(push(
                    a, List.of(a.upsertOp("todos", todo("seed" + i, "l1", "seed"), null)))));
        }
        Map<String, String> expected = new LinkedHashMap<>();
        expected.put("noSuchQuery", "operation.unknown");
        expected.put("notesInList", "operation.invalid_request"); // its required listId is missing
        expected.put("allTodosCapped", "operation.result_too_large"); // 3 stored rows, maxRows 2
        expected.put("badSql", "operation.query_failed");
        int n = 0;
        for (Map.Entry<String, String> x : expected.entrySet()) {
            // each rejection is persisted after the failed read: the push transaction survived it
            OpResult.Error e = rejection(push(
                    a, List.of(a.upsertOp("todos", todo("p" + n++, "l1", "probe:" + x.getKey()), null))));
            assertEquals("app.probe", e.code(), x.getKey());
            assertEquals(x.getValue(), e.message(), x.getKey());
        }
        // §6.7 order (validation → write): the operation being validated is not staged yet, so 3, as a Long
        OpResult.Error count =
                rejection(push(a, List.of(a.upsertOp("todos", todo("p-count", "l1", "probe:countAll"), null))));
        assertEquals("Long:3", count.message());
        assertEquals(3, stored(partitionA, "todos").size());
    }

    @Test
    void theWebhookReceivesSignedQueryEvidence() throws Exception {
        SyncTestClient b = client(partitionB);
        assertTrue(SyncTestClient.applied(push(b, List.of(b.upsertOp("notes", note("secret", "l1", "of b"), null)))));
        SyncTestClient a = client(partitionA);
        assertTrue(SyncTestClient.applied(push(a, List.of(a.upsertOp("notes", note("n1", "l1", "hello"), null)))));
        WebhookResource.hook.reset();

        PushResult r = push(
                a,
                List.of(
                        a.upsertOp("notes", note("n2", "l1", "staged"), null),
                        a.upsertOp("todos", todo("t1", "l1", "milk"), null),
                        a.upsertOp("todos", todo("t2", "l2", "eggs"), null)));
        assertTrue(SyncTestClient.applied(r), r.toString());
        TestWebhook.Received call = WebhookResource.hook.received.get(0);
        assertTrue(TestWebhook.signed(call.header("Syncular-Signature"), call.body(), WebhookResource.SECRET));
        JsonNode body = JSON.readTree(call.body());
        JsonNode ops = body.path("operations");
        assertFalse(ops.get(0).has("evidence"), "the notes operation is not on the declared table");
        JsonNode l1 = ops.get(1).path("evidence").path("notes");
        assertEquals(2, l1.size(), l1.toString()); // n1 stored, n2 staged; never partition B's note
        assertEquals("n1", l1.get(0).path("id").asText());
        assertEquals("hello", l1.get(0).path("body").asText());
        assertEquals("n2", l1.get(1).path("id").asText());
        assertEquals(0, ops.get(2).path("evidence").path("notes").size());
        // once per commit: countAll over the candidate state, by operation id
        assertEquals(2, body.path("evidence").path("todoCount").get(0).path("n").asLong());
        assertTrue(body.path("evidence").path("todoCount").get(0).path("n").isIntegralNumber());
    }
}
