package dev.syncular.server.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.cli.HttpFailure;
import dev.syncular.server.jobs.TenantLoadJob;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.storage.TenantLoadStorage;
import dev.syncular.server.sync.PushRate;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.PrometheusScrape;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.PushOperation;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * Push rates per partition and per actor (issue 45, {@code syncular.fairness.push-*}) through {@code POST /sync} of the
 * running app: a tenant's commit larger than its rate is admitted whole, the next push inside the debt it left is
 * 429 {@code sync.rate_limited} (§10.2) naming the bucket, with {@code Retry-After} and {@code details.retryAfterMs},
 * before any work; in the same moment another tenant's push (and, for an actor's limit, another actor of the same
 * partition) applies; once the rate allows it, the refused push applies on retry. Pull-only rounds are never drawn.
 */
@QuarkusTest
@OwnApp
@TestProfile(PushRateTest.Profile.class)
class PushRateTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration DEADLINE = Duration.ofSeconds(30);

    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "syncular.fairness.push-operations-per-second-per-actor", "100",
                    "syncular.fairness.push-bytes-per-second-per-partition", "64K",
                    "syncular.fairness.push-burst", "1s",
                    // FanoutShareTest (same profile): 2 KB/s of deltas per partition, 4 KB of burst
                    "syncular.realtime.fanout-bytes-per-second-per-partition", "2K");
        }
    }

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    @Inject
    SchemaWindow window;

    @Inject
    TenantLoadJob tenantLoadJob;

    @Inject
    TenantLoadStorage tenantStorage;

    @Inject
    PushRate pushRate;

    private SyncTestClient client(String partition, String actor) {
        return new TodoClients(window.current(), port, partition).client(actor);
    }

    private static List<PushOperation> commit(SyncTestClient c, String prefix, int n, int titleBytes) {
        List<PushOperation> ops = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ops.add(c.upsertOp(
                    "todos", new HashMap<>(TodoClients.todo(prefix + i, "t".repeat(titleBytes), false)), null));
        }
        return ops;
    }

    private static double refused(String limit) {
        return PrometheusScrape.scrape().value("syncular_fairness_refused_total", Map.of("limit", limit));
    }

    @Test
    void anActorPastItsOperationsRateWaitsWhileOthersPush() throws Exception {
        String partition = "rate-actor-" + UUID.randomUUID();
        SyncTestClient hog = client(partition, "hog");
        SyncTestClient mate = client(partition, "mate");
        SyncTestClient elsewhere = client("rate-other-" + UUID.randomUUID(), "quiet");
        double before = refused("actor_push_operations");

        String big = hog.commit(commit(hog, "big-", 300, 8)); // 300 operations against 100/s: admitted whole
        hog.sync();
        assertTrue(SyncTestClient.applied(hog.result(big)));
        String next = hog.upsert("todos", TodoClients.todo("next", "after the debt", false), null);
        JsonNode refusal = refusal(assertThrows(HttpFailure.class, hog::sync));
        assertEquals(
                "actor_push_operations", refusal.path("details").path("reason").asText());
        // about 2,000 ms to wait, 1,000 of them held (syncular.fairness.refusal-hold) before the answer
        assertTrue(refusal.path("details").path("retryAfterMs").asLong() > 500, refusal.toString());
        assertEquals(before + 1, refused("actor_push_operations"), "counted once per refusal");
        // the HTTP binding's Retry-After is the refusal's retryAfterMs rounded up to whole seconds, at least 1
        HttpResponse<String> raw = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/sync"))
                                .header("Content-Type", HttpTransport.CONTENT_TYPE)
                                .header("x-actor-id", "hog")
                                .header("x-syncular-partition", partition)
                                .POST(HttpRequest.BodyPublishers.ofByteArray(
                                        hog.buildRequest().encode()))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertEquals(429, raw.statusCode(), raw.body());
        long retryAfterMs =
                JSON.readTree(raw.body()).path("details").path("retryAfterMs").asLong();
        assertEquals(
                Long.toString(Math.max(1, (retryAfterMs + 999) / 1000)),
                raw.headers().firstValue("Retry-After").orElseThrow());

        // the same moment: another actor of the partition, and another tenant, push and apply
        String mates = mate.upsert("todos", TodoClients.todo("mate", "mine", false), null);
        mate.sync();
        assertTrue(SyncTestClient.applied(mate.result(mates)));
        String quiet = elsewhere.upsert("todos", TodoClients.todo("quiet", "mine", false), null);
        elsewhere.sync();
        assertTrue(SyncTestClient.applied(elsewhere.result(quiet)));

        retryUntilApplied(hog, next);
    }

    @Test
    void aPartitionPastItsBytesRateWaitsWhileAnotherTenantPushes() throws Exception {
        String partition = "rate-bytes-" + UUID.randomUUID();
        SyncTestClient loud = client(partition, "loud");
        SyncTestClient loudMate = client(partition, "loud-mate");
        SyncTestClient quiet = client("rate-quiet-" + UUID.randomUUID(), "quiet");
        double before = refused("partition_push_bytes");

        String big = loud.commit(commit(loud, "wide-", 50, 2000)); // ~100 KB against 64 KB/s
        loud.sync();
        assertTrue(SyncTestClient.applied(loud.result(big)));
        // the partition's bucket is in debt: every actor of it waits, the other tenant does not
        String mates = loudMate.upsert("todos", TodoClients.todo("mate", "small", false), null);
        JsonNode refusal = refusal(assertThrows(HttpFailure.class, loudMate::sync));
        assertEquals(
                "partition_push_bytes", refusal.path("details").path("reason").asText());
        assertEquals(before + 1, refused("partition_push_bytes"));
        String quiets = quiet.upsert("todos", TodoClients.todo("quiet", "mine", false), null);
        quiet.sync();
        assertTrue(SyncTestClient.applied(quiet.result(quiets)));
        // a pull-only round of the indebted partition is served: it pushes nothing
        loud.sync();

        retryUntilApplied(loudMate, mates);
    }

    /**
     * {@code syncular.fairness.push-rate-scope=deployment} (the default): the rates hold across the pods, each admitting
     * its share. With a second live pod in the shared storage this pod admits at most half the actor's 100 operations
     * a second (and of its 1 s burst): a commit of 95 leaves a debt of 45, and the next push waits for it (about
     * 0.9 s, so the next push meets it even on a loaded machine), where the whole rate would have admitted both.
     */
    @Test
    void aDeploymentWideRateIsSharedAmongTheLivePods() throws Exception {
        long now = System.currentTimeMillis();
        String otherPod = "other-pod/" + UUID.randomUUID();
        tenantStorage
                .publishTenantLoad(otherPod, now, now - 100_000, List.of())
                .await()
                .atMost(DEADLINE);
        try {
            tenantLoadJob.publish().await().atMost(DEADLINE);
            int live = tenantStorage.countLivePods(now - 30_000).await().atMost(DEADLINE);
            assertTrue(live >= 2, "this pod and the other one: " + live);
            assertEquals(live, pushRate.sharedBy());

            SyncTestClient c = client("rate-shared-" + UUID.randomUUID(), "sharer");
            String big = c.commit(commit(c, "half-", 95, 8));
            c.sync();
            assertTrue(SyncTestClient.applied(c.result(big)));
            String next = c.upsert("todos", TodoClients.todo("next", "after the share", false), null);
            JsonNode refusal = refusal(assertThrows(HttpFailure.class, c::sync));
            assertEquals(
                    "actor_push_operations",
                    refusal.path("details").path("reason").asText());
            long waitMs = refusal.path("details").path("retryAfterMs").asLong();
            // with two pods 46 operations at 50/s: a wait of at most 920 ms, held whole (refusal-hold 1 s)
            assertTrue(waitMs >= 0 && waitMs < 1000, refusal.toString());
            retryUntilApplied(c, next);
        } finally {
            // the other pod's row goes (every row written before now + 1), and this pod takes its whole rate again
            tenantStorage
                    .publishTenantLoad(tenantLoadJob.podId(), now + 1, now + 1, List.of())
                    .await()
                    .atMost(DEADLINE);
            tenantLoadJob.publish().await().atMost(DEADLINE);
        }
        assertEquals(1, pushRate.sharedBy());
    }

    /** The §10.1 body of a 429 {@code sync.rate_limited}, its {@code Retry-After} checked against the details. */
    private static JsonNode refusal(HttpFailure f) throws Exception {
        assertEquals(429, f.status, f.body);
        JsonNode body = JSON.readTree(f.body);
        assertEquals("sync.rate_limited", body.path("code").asText());
        assertTrue(body.path("retryable").asBoolean());
        return body;
    }

    /** A client retrying its refused push until the rate allows it (polled with a deadline). */
    private static void retryUntilApplied(SyncTestClient c, String commit) {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (true) {
            try {
                c.sync();
                break;
            } catch (HttpFailure f) {
                assertEquals(429, f.status, f.body);
                assertTrue(System.nanoTime() < deadline, "still refused after " + DEADLINE);
            }
        }
        assertTrue(SyncTestClient.applied(c.result(commit)));
    }
}
