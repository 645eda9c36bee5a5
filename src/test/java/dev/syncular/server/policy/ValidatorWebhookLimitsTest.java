package dev.syncular.server.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.cli.HttpFailure;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.PrometheusScrape;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestWebhook.Answer;
import dev.syncular.server.testsupport.WebhookResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The validator webhook's bounds (§6.8: it runs under the partition lock, so every call must be short), through
 * {@code POST /sync} of the running app against a real local HTTP endpoint: a slow endpoint is cut by the read
 * timeout, an oversized answer by the answer cap, a failing endpoint opens the circuit breaker — which then fails
 * validations at once, retryable, without calling — and a trial call after the open period closes it again. Each
 * outcome, the breaker state and the pool bound are read from the Prometheus scrape.
 */
@QuarkusTest
@OwnApp
@TestProfile(ValidatorWebhookLimitsTest.Profile.class)
class ValidatorWebhookLimitsTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration DEADLINE = Duration.ofSeconds(20);

    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "syncular.policy.validator-webhook.url",
                    "${webhook.base}/validate",
                    "syncular.policy.validator-webhook.secret",
                    WebhookResource.SECRET,
                    "syncular.policy.validator-webhook.timeout",
                    "5s",
                    "syncular.policy.validator-webhook.read-timeout",
                    "300ms",
                    "syncular.policy.validator-webhook.max-answer-size",
                    "1K",
                    "syncular.policy.validator-webhook.pool-size",
                    "3",
                    "syncular.policy.validator-webhook.breaker-failures",
                    "3",
                    "syncular.policy.validator-webhook.breaker-open-for",
                    "1s");
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

    private final String partition = "webhook-limits-" + UUID.randomUUID();

    private SyncTestClient client(String actor) {
        return new TodoClients(window.current(), port, partition).client(actor);
    }

    private static double calls(String outcome) {
        return PrometheusScrape.scrape()
                .value("syncular_webhook_calls_total", Map.of("endpoint", "validator", "outcome", outcome));
    }

    private static double breakerOpen() {
        return PrometheusScrape.scrape().value("syncular_webhook_breaker_open", Map.of("endpoint", "validator"));
    }

    /** The §10.1 body of a failed round: {@code sync.internal_error}, retryable, and its {@code details.reason}. */
    private static String failedReason(HttpFailure f) throws Exception {
        assertEquals(500, f.status, f.body);
        JsonNode body = JSON.readTree(f.body);
        assertEquals("sync.internal_error", body.path("code").asText(), f.body);
        assertTrue(body.path("retryable").asBoolean(), f.body);
        return body.path("details").path("reason").asText();
    }

    /**
     * Pushes until one push is validated and applies (each attempt either fails at once while the breaker is open
     * or reaches the endpoint); the endpoint answers {@code {}}. A success resets the consecutive-failure count.
     */
    private void untilAValidationSucceeds() {
        WebhookResource.hook.reset();
        SyncTestClient c = client("closer");
        String commit = c.upsert("todos", TodoClients.todo("close-" + UUID.randomUUID(), "close", false), null);
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (!SyncTestClient.applied(c.result(commit))) {
            assertTrue(System.nanoTime() < deadline, "no validation succeeded within " + DEADLINE);
            try {
                c.sync();
            } catch (HttpFailure f) {
                assertEquals(500, f.status, f.body); // the breaker, still open: fails at once; try again
            }
        }
    }

    @BeforeEach
    void closedBreaker() {
        untilAValidationSucceeds();
        assertEquals(0.0, breakerOpen());
        WebhookResource.hook.reset();
    }

    @Test
    void aSlowEndpointIsCutByTheReadTimeout() throws Exception {
        CountDownLatch held = new CountDownLatch(1);
        WebhookResource.hook.answer(r -> new Answer(200, "{}", held));
        double before = calls("timeout");
        SyncTestClient a = client("alice");
        a.upsert("todos", TodoClients.todo("slow", "slow", false), null);
        long started = System.nanoTime();
        try {
            HttpFailure f = assertThrows(HttpFailure.class, a::sync);
            long tookMs = (System.nanoTime() - started) / 1_000_000;
            assertEquals("timeout", failedReason(f));
            assertTrue(tookMs < 4_000, "cut by the 300 ms read timeout, not the 5 s hard limit: " + tookMs + " ms");
        } finally {
            held.countDown();
        }
        assertEquals(before + 1, calls("timeout"));
        // the round never applied: the retry is validated again and applies
        WebhookResource.hook.reset();
        a.syncUntilIdle();
        assertTrue(a.table("todos").containsKey("slow"));
    }

    @Test
    void anOversizedAnswerIsRefused() throws Exception {
        WebhookResource.hook.answer(r -> Answer.ok("{\"pad\":\"" + "x".repeat(4_096) + "\"}"));
        double before = calls("answer_too_large");
        SyncTestClient a = client("alice");
        a.upsert("todos", TodoClients.todo("big", "big", false), null);
        assertEquals("answer_too_large", failedReason(assertThrows(HttpFailure.class, a::sync)));
        assertEquals(before + 1, calls("answer_too_large"));
        // an answer within the cap is read as before
        WebhookResource.hook.answer(r -> Answer.ok("{\"pad\":\"" + "x".repeat(512) + "\"}"));
        a.syncUntilIdle();
        assertTrue(a.table("todos").containsKey("big"));
    }

    @Test
    void aFailingEndpointOpensTheBreakerWhichFailsFastAndATrialClosesIt() throws Exception {
        WebhookResource.hook.answer(r -> new Answer(503, "", null));
        double shortCircuited = calls("circuit_open");
        SyncTestClient a = client("alice");
        a.upsert("todos", TodoClients.todo("flaky", "flaky", false), null);
        for (int i = 0; i < 3; i++) {
            assertEquals("server_error", failedReason(assertThrows(HttpFailure.class, a::sync)));
        }
        assertEquals(3, WebhookResource.hook.received.size());
        assertEquals(1.0, breakerOpen());

        // open: failed at once, retryable, and the endpoint is not called
        long started = System.nanoTime();
        assertEquals("circuit_open", failedReason(assertThrows(HttpFailure.class, a::sync)));
        assertTrue((System.nanoTime() - started) / 1_000_000 < 1_000);
        assertEquals(3, WebhookResource.hook.received.size(), "no call while the breaker is open");
        assertEquals(shortCircuited + 1, calls("circuit_open"));

        // the endpoint recovers: after the open period one trial call closes the breaker, and the commit applies
        untilAValidationSucceeds();
        assertEquals(0.0, breakerOpen());
        a.syncUntilIdle();
        assertTrue(a.table("todos").containsKey("flaky"));
        assertEquals(
                3.0, PrometheusScrape.scrape().value("syncular_webhook_pool_size", Map.of("endpoint", "validator")));
        assertEquals(
                0.0, PrometheusScrape.scrape().value("syncular_webhook_in_flight", Map.of("endpoint", "validator")));
    }
}
