package dev.syncular.server.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.observability.WebhookMetrics;
import dev.syncular.server.sync.Tracing;
import dev.syncular.server.testsupport.MappedConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.smallrye.config.ConfigValidationException;
import io.vertx.mutiny.core.Vertx;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Per-type reaction endpoints (§6.9 delivery, docs/POLICY.md "Per-type endpoints") as configuration resolves them:
 * the signing key of a named endpoint reaches it from its environment variable (the Helm chart's form), types route
 * to their endpoint and the rest to the default webhook, and a configuration that would route one type twice, or
 * name an endpoint ambiguously, is refused.
 */
class ReactionEndpointsTest {
    private static final Vertx VERTX = Vertx.vertx();
    private static final WebhookMetrics METRICS = new WebhookMetrics(new SimpleMeterRegistry());

    @AfterAll
    static void close() {
        VERTX.closeAndAwait();
    }

    private static ReactionsConfig config(Map<String, String> props, Map<String, String> env) {
        return MappedConfig.mapping(ReactionsConfig.class, props, env);
    }

    @Test
    void anEndpointTakesItsTypesAndItsSecretFromTheEnvironment() {
        ReactionsConfig c = config(
                Map.of(
                        "syncular.reactions.webhook.url", "http://127.0.0.1:9/default",
                        "syncular.reactions.endpoints.billing.types", "invoice.paid,invoice.refunded",
                        "syncular.reactions.endpoints.billing.url", "http://127.0.0.1:9/billing",
                        "syncular.reactions.endpoints.billing.timeout", "3s"),
                Map.of(
                        "SYNCULAR_REACTIONS_WEBHOOK_SECRET",
                        "default-secret-0123456789",
                        "SYNCULAR_REACTIONS_ENDPOINTS_BILLING_SECRET",
                        "billing-secret-0123456789"));
        ReactionsConfig.Endpoint billing = c.endpoints().get("billing");
        assertEquals(List.of("invoice.paid", "invoice.refunded"), billing.types());
        assertEquals("billing-secret-0123456789", billing.secret().orElseThrow());
        assertEquals(Duration.ofSeconds(3), billing.timeout());
        assertEquals(Duration.ofSeconds(2), billing.connectTimeout(), "an unset bound is the default webhook's");
        assertEquals(8, billing.poolSize());

        ReactionEndpoints endpoints = new ReactionEndpoints(VERTX, METRICS, c, Tracing.OFF);
        try {
            assertTrue(endpoints.any());
            assertNull(endpoints.claimable(), "a default webhook: every type is claimed");
            assertSame(endpoints.forType("invoice.paid"), endpoints.forType("invoice.refunded"));
            Webhook other = endpoints.forType("todo.completed");
            assertTrue(other != endpoints.forType("invoice.paid"));
            String body = "{}";
            assertTrue(
                    endpoints
                            .forType("invoice.paid")
                            .signature(1, body)
                            .equals(new Webhook(
                                            VERTX,
                                            "probe",
                                            "http://127.0.0.1:9/x",
                                            "billing-secret-0123456789",
                                            Webhook.Limits.of(c.webhook()),
                                            METRICS,
                                            Tracing.OFF)
                                    .signature(1, body)),
                    "signed with the endpoint's own secret");
        } finally {
            endpoints.close();
        }
    }

    @Test
    void withoutADefaultOnlyTheListedTypesAreClaimed() {
        ReactionEndpoints endpoints = new ReactionEndpoints(
                VERTX,
                METRICS,
                config(
                        Map.of(
                                "syncular.reactions.endpoints.search.types", "todo.completed",
                                "syncular.reactions.endpoints.search.url", "http://127.0.0.1:9/search",
                                "syncular.reactions.endpoints.search.secret", "search-secret-0123456789"),
                        Map.of()),
                Tracing.OFF);
        try {
            assertEquals(List.of("todo.completed"), endpoints.claimable());
            assertNull(endpoints.forType("todo.other"));
        } finally {
            endpoints.close();
        }
        ReactionEndpoints none = new ReactionEndpoints(VERTX, METRICS, config(Map.of(), Map.of()), Tracing.OFF);
        assertTrue(!none.any(), "nothing configured: the worker stays idle");
    }

    /** The refusals happen while the configuration is mapped, before any endpoint exists (ReactionsConfig.problems, as at start-up). */
    @Test
    void aTypeRoutedTwiceAnUnsignedEndpointAndAnAmbiguousNameAreRefused() {
        Map<String, String> twice = Map.of(
                "syncular.reactions.webhook.secret", "default-secret-0123456789",
                "syncular.reactions.endpoints.a.types", "todo.completed",
                "syncular.reactions.endpoints.a.url", "http://127.0.0.1:9/a",
                "syncular.reactions.endpoints.b.types", "todo.completed,todo.other",
                "syncular.reactions.endpoints.b.url", "http://127.0.0.1:9/b");
        assertRefused(twice, "syncular.reactions.endpoints: reaction type todo.completed is listed by two endpoints");
        assertRefused(
                Map.of(
                        "syncular.reactions.endpoints.a.types",
                        "todo.completed",
                        "syncular.reactions.endpoints.a.url",
                        "http://127.0.0.1:9/a"),
                "syncular.reactions.endpoints.a.secret is required");
        assertRefused(
                Map.of(
                        "syncular.reactions.webhook.secret",
                        "default-secret-0123456789",
                        "syncular.reactions.endpoints.\"Bill_ing\".types",
                        "todo.completed",
                        "syncular.reactions.endpoints.\"Bill_ing\".url",
                        "http://127.0.0.1:9/a"),
                "[a-z0-9]+");
    }

    private static void assertRefused(Map<String, String> props, String message) {
        ConfigValidationException e = assertThrows(ConfigValidationException.class, () -> config(props, Map.of()));
        assertTrue(e.getMessage().contains(message), e.getMessage());
    }
}
