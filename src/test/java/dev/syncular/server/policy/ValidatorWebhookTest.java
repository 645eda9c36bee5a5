package dev.syncular.server.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.cli.HttpFailure;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestWebhook;
import dev.syncular.server.testsupport.TestWebhook.Answer;
import dev.syncular.server.testsupport.WebhookResource;
import dev.syncular.server.wire.CommitStatus;
import dev.syncular.server.wire.OpResult;
import dev.syncular.server.wire.PushResult;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The validator webhook (a §6.8 whole-commit validator behind HTTPS) through {@code POST /sync} of the running app,
 * against a real HTTP endpoint started by the test: the signed operation evidence it receives, acceptance, a host
 * rejection, and the fixed failure mode — a timeout or a 5xx fails the round with retryable
 * {@code sync.internal_error} and never applies, so the client's retry asks again and applies once.
 */
@QuarkusTest
@OwnApp
@TestProfile(ValidatorWebhookTest.Profile.class)
class ValidatorWebhookTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "syncular.policy.validator-webhook.url",
                    "${webhook.base}/validate",
                    "syncular.policy.validator-webhook.secret",
                    WebhookResource.SECRET,
                    "syncular.policy.validator-webhook.timeout",
                    "500ms");
        }

        @Override
        public List<TestResourceEntry> testResources() {
            return List.of(new TestResourceEntry(WebhookResource.class));
        }
    }

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    @Inject
    SchemaWindow window;

    private final String partition = "webhook-" + UUID.randomUUID();

    @BeforeEach
    void reset() {
        WebhookResource.hook.reset();
    }

    private SyncTestClient client(String actor) {
        return new TodoClients(window.current(), port, partition).client(actor);
    }

    private static Map<String, Object> todo(String id, String title) {
        return TodoClients.todo(id, title, false);
    }

    /** The rows a fresh client bootstraps: what storage holds. */
    private Map<String, SyncTestClient.LocalRow> stored() {
        return client("reader").table("todos");
    }

    @Test
    void signedEvidenceIsSentAndAnAcceptedCommitApplies() throws Exception {
        SyncTestClient a = client("alice");
        String commit = a.upsert("todos", todo("t1", "hello"), null);
        a.syncUntilIdle();
        assertTrue(SyncTestClient.applied(a.result(commit)));

        TestWebhook.Received call = WebhookResource.hook.received.get(0);
        assertEquals("/validate", call.path());
        assertTrue(TestWebhook.signed(call.header("Syncular-Signature"), call.body(), WebhookResource.SECRET));
        JsonNode evidence = JSON.readTree(call.body());
        assertEquals(partition, evidence.path("partition").asText());
        assertEquals("alice", evidence.path("actorId").asText());
        assertEquals(commit, evidence.path("clientCommitId").asText());
        JsonNode op = evidence.path("operations").get(0);
        assertEquals("upsert", op.path("op").asText());
        assertEquals("t1", op.path("rowId").asText());
        assertEquals("hello", op.path("row").path("title").asText());
        assertTrue(op.path("stored").isNull());
        assertEquals(1, op.path("nextServerVersion").asInt());
        assertEquals(1, stored().size());
    }

    @Test
    void aHostRejectionRejectsTheCommitWithItsCode() {
        WebhookResource.hook.answer(
                r -> Answer.ok("{\"reject\":{\"code\":\"app.blocked\",\"message\":\"blocked by policy\","
                        + "\"opIndex\":0,\"details\":{\"reason\":\"blocked\"}}}"));
        SyncTestClient a = client("alice");
        String commit = a.upsert("todos", todo("t1", "hello"), null);
        a.syncUntilIdle();
        PushResult r = a.result(commit);
        assertEquals(CommitStatus.REJECTED, r.status());
        assertEquals("app.blocked", ((OpResult.Error) r.results().get(0)).code());
        WebhookResource.hook.reset();
        assertEquals(0, stored().size());
    }

    @Test
    void aRefusingEndpointIsAHostBug() {
        WebhookResource.hook.answer(r -> new Answer(404, "", null));
        SyncTestClient a = client("alice");
        String commit = a.upsert("todos", todo("t1", "hello"), null);
        a.syncUntilIdle();
        OpResult.Error e = (OpResult.Error) a.result(commit).results().get(0);
        assertEquals("sync.constraint_violation", e.code());
        assertEquals("whole-commit validator failed", e.message());
    }

    @Test
    void aTimeoutOrServerErrorNeverAppliesAndTheRetryAsksAgain() {
        SyncTestClient a = client("alice");
        String commit = a.upsert("todos", todo("t1", "hello"), null);
        CountDownLatch held = new CountDownLatch(1);
        WebhookResource.hook.then(new Answer(200, "{}", held), new Answer(503, "", null));
        try {
            HttpFailure timeout = assertThrows(HttpFailure.class, a::sync);
            assertEquals(500, timeout.status);
            assertTrue(timeout.body.contains("\"code\":\"sync.internal_error\""), timeout.body);
            assertTrue(timeout.body.contains("\"retryable\":true"), timeout.body);
        } finally {
            held.countDown();
        }
        HttpFailure unavailable = assertThrows(HttpFailure.class, a::sync);
        assertTrue(unavailable.body.contains("sync.internal_error"), unavailable.body);
        assertEquals(2, WebhookResource.hook.received.size());

        // nothing applied, nothing persisted: the retry is validated again and applies once
        a.syncUntilIdle();
        assertTrue(SyncTestClient.applied(a.result(commit)));
        assertEquals(3, WebhookResource.hook.received.size());
        assertEquals(1, stored().size());
    }
}
