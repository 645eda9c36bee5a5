package dev.syncular.server.policy;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.storage.Reaction;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.PrometheusScrape;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestWebhook;
import dev.syncular.server.testsupport.TestWebhook.Answer;
import dev.syncular.server.testsupport.WebhookResource;
import dev.syncular.server.wire.CommitStatus;
import dev.syncular.server.wire.PushCommit;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Durable reactions (§6.9) through the running app: a declarative planner ({@code syncular.policy.file}) appends
 * reactions with their commit, the delivery worker hands them to a real HTTP endpoint started by the test (signed,
 * with the stable idempotency key), retries with backoff, dead-letters, and the admin API lists and retries them.
 * Conflicts, rejections and replays plan nothing; concurrent workers and a worker that died holding a lease never
 * deliver one reaction twice at once.
 */
@QuarkusTest
@OwnApp
@TestProfile(ReactionsTest.Profile.class)
class ReactionsTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TOKEN = "reactions-admin-token-0123456789";
    private static final String URGENT_SECRET = "urgent-endpoint-secret-0123456789abcdef";

    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            Path policy;
            try {
                policy = Files.createTempFile("policy", ".json");
                Files.writeString(
                        policy,
                        "{\"validators\":[{\"table\":\"todos\",\"rule\":{\"maxLength\":{\"column\":\"title\","
                                + "\"max\":20,\"code\":\"app.title_too_long\"}}}],"
                                + "\"reactions\":[{\"table\":\"todos\",\"when\":{\"column\":\"done\",\"equals\":true},"
                                + "\"type\":\"todo.completed\",\"version\":2,\"maxAttempts\":3},"
                                + "{\"table\":\"todos\",\"when\":{\"column\":\"title\",\"equals\":\"urgent\"},"
                                + "\"type\":\"todo.urgent\"}]}");
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            Map<String, String> m = new HashMap<>();
            m.put("syncular.policy.file", policy.toString());
            // the pre-rename names (syncular.reactions.webhook.*): still read, with a warning (RenamedProperties)
            m.put("syncular.reactions.webhook-url", "${webhook.base}/reactions");
            m.put("syncular.reactions.webhook-secret", WebhookResource.SECRET);
            m.put("syncular.reactions.webhook-timeout", "5s"); // a held call (the metrics test) outlives its scrape
            m.put("syncular.reactions.lease", "2s");
            // a second endpoint for one type, signed with its own key
            m.put("syncular.reactions.endpoints.urgent.types", "todo.urgent");
            m.put("syncular.reactions.endpoints.urgent.url", "${webhook.base}/urgent");
            m.put("syncular.reactions.endpoints.urgent.secret", URGENT_SECRET);
            m.put("syncular.reactions.initial-backoff", "50ms");
            m.put("syncular.reactions.max-backoff", "100ms");
            m.put("syncular.admin.token", TOKEN);
            return m;
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

    @Inject
    ReactionDelivery delivery;

    private final String partition = "reactions-" + UUID.randomUUID();

    @AfterEach
    void reset() {
        WebhookResource.hook.reset();
    }

    private SyncTestClient client(String actor) {
        return new TodoClients(window.current(), port, partition).client(actor);
    }

    /** This partition's reactions, through the admin API. */
    private List<JsonNode> reactions() {
        String body = given().header("Authorization", "Bearer " + TOKEN)
                .queryParam("partition", partition)
                .get("/admin/reactions")
                .then()
                .statusCode(200)
                .extract()
                .asString();
        try {
            List<JsonNode> out = new ArrayList<>();
            JSON.readTree(body).forEach(out::add);
            return out;
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The deliveries of this partition's reactions the endpoint received. */
    private List<JsonNode> deliveries() {
        List<JsonNode> out = new ArrayList<>();
        for (TestWebhook.Received r : WebhookResource.hook.received) {
            try {
                JsonNode body = JSON.readTree(r.body());
                if (partition.equals(body.path("partition").asText())) {
                    out.add(body);
                }
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }
        return out;
    }

    private static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.onSpinWait();
        }
    }

    private boolean allIn(String status, int count) {
        List<JsonNode> rs = reactions();
        return rs.size() == count
                && rs.stream().allMatch(r -> status.equals(r.path("status").asText()));
    }

    @Test
    void plannedWithItsCommitAndDeliveredSignedWithTheStableKey() throws Exception {
        SyncTestClient a = client("alice");
        String commit = a.upsert("todos", TodoClients.todo("t1", "write tests", true), null);
        a.syncUntilIdle();
        assertTrue(SyncTestClient.applied(a.result(commit)));

        await("delivery", () -> allIn(Reaction.COMPLETED, 1));
        List<JsonNode> sent = deliveries();
        assertEquals(1, sent.size());
        JsonNode d = sent.get(0);
        assertEquals("todo.completed", d.path("type").asText());
        assertEquals(2, d.path("version").asInt());
        String key = "[\"" + partition + "\",\"" + a.clientId + "\",\"" + commit + "\",\"todo.completed:todos:t1\"]";
        assertEquals(key, d.path("idempotencyKey").asText());
        assertEquals("t1", d.path("payload").path("rowId").asText());
        assertTrue(d.path("payload").path("row").path("done").asBoolean());
        assertEquals(1, d.path("attempt").asInt());
        TestWebhook.Received raw = WebhookResource.hook.received.stream()
                .filter(r -> r.body().contains(partition))
                .findFirst()
                .orElseThrow();
        assertEquals(key, raw.header("Idempotency-Key"));
        assertTrue(TestWebhook.signed(raw.header("Syncular-Signature"), raw.body(), WebhookResource.SECRET));
        JsonNode row = reactions().get(0);
        assertEquals(
                a.result(commit).commitSeq().longValue(), row.path("commitSeq").asLong());
        assertEquals(1, row.path("attempts").asInt());
    }

    @Test
    void conflictsRejectionsReplaysAndNonTransitionsPlanNothing() {
        SyncTestClient a = client("alice");
        a.upsert("todos", TodoClients.todo("t1", "open", false), null);
        a.syncUntilIdle();
        // rejected by the row validator (§6.7) though it completes the todo
        String rejected = a.upsert("todos", TodoClients.todo("t1", "a title much longer than twenty", true), null);
        a.syncUntilIdle();
        assertEquals(CommitStatus.REJECTED, a.result(rejected).status());
        // a conflict (§6.2): stale baseVersion
        String conflict = a.upsert("todos", TodoClients.todo("t1", "done", true), 0L);
        a.syncUntilIdle();
        assertEquals(CommitStatus.REJECTED, a.result(conflict).status());
        assertEquals(0, reactions().size());

        String done = a.upsert("todos", TodoClients.todo("t1", "done", true), null);
        PushCommit applied = a.outbox.get(a.outbox.size() - 1);
        a.syncUntilIdle();
        assertTrue(SyncTestClient.applied(a.result(done)));
        a.outbox.add(applied); // replayed: cached, never planned again (§6.9)
        a.syncUntilIdle();
        assertEquals(CommitStatus.CACHED, a.result(done).status());
        a.upsert("todos", TodoClients.todo("t1", "renamed", true), null); // still done: no transition
        a.syncUntilIdle();
        await("one delivery", () -> allIn(Reaction.COMPLETED, 1));
        assertEquals(1, deliveries().size());
    }

    @Test
    void failuresRetryWithBackoffThenDeadLetterAndTheAdminRetryDelivers() {
        WebhookResource.hook.answer(r -> r.body().contains(partition) ? new Answer(500, "", null) : Answer.ok("{}"));
        SyncTestClient a = client("alice");
        a.upsert("todos", TodoClients.todo("t1", "x", true), null);
        a.upsert("todos", TodoClients.todo("t2", "y", false), null);
        a.syncUntilIdle();
        await("dead letter", () -> allIn(Reaction.DEAD_LETTER, 1));
        JsonNode dead = reactions().get(0);
        assertEquals(3, dead.path("attempts").asInt());
        assertEquals("reaction.http_error", dead.path("lastErrorCode").asText());
        assertEquals(500, dead.path("lastErrorDetails").path("status").asInt());
        assertEquals(3, deliveries().size());

        // a 4xx is permanent: dead-lettered on its first attempt
        WebhookResource.hook.answer(r -> r.body().contains(partition) ? new Answer(422, "", null) : Answer.ok("{}"));
        a.upsert("todos", TodoClients.todo("t2", "y", true), null);
        a.syncUntilIdle();
        await(
                "permanent failure",
                () -> reactions().stream()
                        .filter(r -> r.path("key").asText().endsWith("t2"))
                        .anyMatch(r ->
                                Reaction.DEAD_LETTER.equals(r.path("status").asText())
                                        && "reaction.rejected"
                                                .equals(r.path("lastErrorCode").asText())
                                        && r.path("attempts").asInt() == 1));

        WebhookResource.hook.answer(r -> Answer.ok("{}"));
        given().header("Authorization", "Bearer " + TOKEN)
                .post("/admin/reactions/" + dead.path("id").asLong() + "/retry")
                .then()
                .statusCode(200);
        given().header("Authorization", "Bearer " + TOKEN)
                .post("/admin/reactions/" + dead.path("id").asLong() + "/retry")
                .then()
                .statusCode(409); // pending now, not dead-lettered
        await(
                "retried delivery",
                () -> reactions().stream()
                        .anyMatch(r -> r.path("id").asLong() == dead.path("id").asLong()
                                && Reaction.COMPLETED.equals(r.path("status").asText())));
        given().header("Authorization", "Bearer " + TOKEN)
                .get("/admin/reactions")
                .then()
                .statusCode(200);
        given().get("/admin/reactions").then().statusCode(401);
        String tail = given().header("Authorization", "Bearer " + TOKEN)
                .get("/admin/events")
                .then()
                .statusCode(200)
                .extract()
                .asString();
        assertTrue(
                tail.contains("\"kind\":\"reaction.dead_lettered\"") && tail.contains("\"kind\":\"reaction.retried\""),
                tail);
    }

    @Test
    void concurrentWorkersAndALeaseLeftByADeadWorkerDeliverEachReactionOnceAtATime() {
        SyncTestClient a = client("alice");
        for (int i = 0; i < 12; i++) {
            a.upsert("todos", TodoClients.todo("t" + i, "x", true), null);
        }
        // a worker on a pod that dies right after claiming: its leases block the rows until they expire
        List<Reaction> orphaned = delivery.store()
                .claim("dead-pod", System.currentTimeMillis() + 60_000, 0, 0)
                .await()
                .indefinitely();
        assertEquals(0, orphaned.size());
        a.syncUntilIdle();
        List<Reaction> held = delivery.store()
                .claim("dead-pod", System.currentTimeMillis(), 2_000, 3)
                .await()
                .indefinitely();
        // four more workers race the scheduled one
        List<CompletableFuture<Integer>> workers = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            workers.add(delivery.runOnce(System.currentTimeMillis()).subscribeAsCompletionStage());
        }
        workers.forEach(CompletableFuture::join);
        await("every reaction delivered", () -> allIn(Reaction.COMPLETED, 12));
        Map<Long, Integer> perId = new HashMap<>();
        deliveries().forEach(d -> perId.merge(d.path("id").asLong(), 1, Integer::sum));
        assertEquals(12, perId.size());
        assertTrue(perId.values().stream().allMatch(n -> n == 1), perId.toString());
        for (Reaction r : held) {
            // the dead worker's claim counted one attempt; the takeover delivered on the second
            JsonNode row = reactions().stream()
                    .filter(x -> x.path("id").asLong() == r.id())
                    .findFirst()
                    .orElseThrow();
            assertEquals(2, row.path("attempts").asInt());
        }
        // the dead worker cannot acknowledge what another worker took over
        assertTrue(held.isEmpty()
                || !delivery.store()
                        .complete(held.get(0).id(), "dead-pod", System.currentTimeMillis())
                        .await()
                        .indefinitely());
    }

    private static PrometheusScrape scrape() {
        return PrometheusScrape.scrape();
    }

    /**
     * The reaction meters on {@code /q/metrics}: planned with the commit, a retried and a delivered attempt with
     * their call latency, by type; the undelivered gauge counts the reaction while its delivery is in flight
     * (the worker's pass, held by the endpoint, read it) and drops to zero once it completed.
     */
    @Test
    void metricsCountPlannedRetriedDeliveredAndTheUndeliveredQueue() {
        Map<String, String> type = Map.of("type", "todo.completed");
        PrometheusScrape before = scrape();
        CountDownLatch release = new CountDownLatch(1);
        WebhookResource.hook.then(new Answer(503, "", null), new Answer(200, "{}", release));
        SyncTestClient a = client("alice");
        a.upsert("todos", TodoClients.todo("m1", "measured", true), null);
        a.syncUntilIdle();
        try {
            await("the second attempt in flight", () -> deliveries().size() == 2);
            PrometheusScrape during = scrape();
            assertTrue(
                    during.value("syncular_reactions_pending", Map.of()) >= 1,
                    during.values("syncular_reactions_pending").toString());
            assertEquals(
                    1,
                    during.value("syncular_reactions_planned_total", type)
                            - before.value("syncular_reactions_planned_total", type));
            assertEquals(
                    1,
                    during.value("syncular_reactions_retried_total", type)
                            - before.value("syncular_reactions_retried_total", type));
        } finally {
            release.countDown();
        }
        await("delivery", () -> allIn(Reaction.COMPLETED, 1));
        await("the undelivered gauge at zero", () -> scrape().value("syncular_reactions_pending", Map.of()) == 0);
        PrometheusScrape after = scrape();
        assertEquals(
                1,
                after.value("syncular_reactions_delivered_total", type)
                        - before.value("syncular_reactions_delivered_total", type));
        assertEquals(
                0,
                after.value("syncular_reactions_dead_lettered_total", type)
                        - before.value("syncular_reactions_dead_lettered_total", type));
        Map<String, String> delivered = Map.of("type", "todo.completed", "outcome", "delivered");
        assertEquals(
                1,
                after.value("syncular_reactions_delivery_seconds_count", delivered)
                        - before.value("syncular_reactions_delivery_seconds_count", delivered));
        assertTrue(after.value("syncular_reactions_delivery_seconds_sum", delivered)
                > before.value("syncular_reactions_delivery_seconds_sum", delivered));
    }

    /**
     * Per-type endpoints ({@code syncular.reactions.endpoints}): one commit plans a {@code todo.completed} and a
     * {@code todo.urgent} reaction; the first goes to the default webhook signed with its secret, the second to
     * the endpoint listing its type, signed with that endpoint's own secret.
     */
    @Test
    void aTypeListedByAnEndpointGoesThereAndTheOthersToTheDefault() throws Exception {
        SyncTestClient a = client("alice");
        a.upsert("todos", TodoClients.todo("u1", "urgent", true), null);
        a.syncUntilIdle();
        await("both delivered", () -> allIn(Reaction.COMPLETED, 2));
        List<TestWebhook.Received> sent = WebhookResource.hook.received.stream()
                .filter(r -> r.body().contains(partition))
                .toList();
        assertEquals(2, sent.size());
        for (TestWebhook.Received r : sent) {
            String type = JSON.readTree(r.body()).path("type").asText();
            if (type.equals("todo.urgent")) {
                assertEquals("/urgent", r.path());
                assertTrue(TestWebhook.signed(r.header("Syncular-Signature"), r.body(), URGENT_SECRET));
                assertTrue(!TestWebhook.signed(r.header("Syncular-Signature"), r.body(), WebhookResource.SECRET));
            } else {
                assertEquals("todo.completed", type);
                assertEquals("/reactions", r.path());
                assertTrue(TestWebhook.signed(r.header("Syncular-Signature"), r.body(), WebhookResource.SECRET));
            }
        }
        assertEquals(
                Set.of("/urgent", "/reactions"),
                sent.stream().map(TestWebhook.Received::path).collect(Collectors.toSet()));
    }
}
