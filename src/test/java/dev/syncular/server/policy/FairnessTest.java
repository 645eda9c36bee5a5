package dev.syncular.server.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.cli.HttpFailure;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.PrometheusScrape;
import dev.syncular.server.testsupport.RawHttp;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestWebhook.Answer;
import dev.syncular.server.testsupport.WebhookResource;
import dev.syncular.server.wire.ErrorFrame;
import dev.syncular.server.wire.MessageDecoder;
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
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Fairness between actors ({@code syncular.fairness.*}, the engine's round admission) through {@code POST /sync} of
 * the running app: an actor flooding one partition with large commits over many connections gets 429
 * {@code sync.rate_limited} while another actor's pushes to the same partition are admitted and apply promptly; a
 * refusal carries {@code Retry-After}, the §10.1 body naming the limit, and is counted. The validator webhook (a real
 * local endpoint) makes every push hold its partition for a moment, as a real policy call would, and lets one test
 * hold an actor's rounds in flight deterministically.
 */
@QuarkusTest
@OwnApp
@TestProfile(FairnessTest.Profile.class)
class FairnessTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration DEADLINE = Duration.ofSeconds(60);

    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "syncular.fairness.max-rounds-per-actor",
                    "2",
                    "syncular.fairness.max-rounds-per-partition",
                    "8",
                    "syncular.fairness.max-bootstraps-per-partition",
                    "1",
                    "syncular.fairness.retry-after",
                    "2s",
                    "syncular.policy.validator-webhook.url",
                    "${webhook.base}/validate",
                    "syncular.policy.validator-webhook.secret",
                    WebhookResource.SECRET,
                    "syncular.policy.validator-webhook.timeout",
                    "20s",
                    "syncular.policy.validator-webhook.read-timeout",
                    "20s");
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

    @BeforeEach
    void reset() {
        WebhookResource.hook.reset();
    }

    private SyncTestClient client(String partition, String actor) {
        return new TodoClients(window.current(), port, partition).client(actor);
    }

    private static double refused(String limit) {
        return PrometheusScrape.scrape().value("syncular_fairness_refused_total", Map.of("limit", limit));
    }

    private static List<PushOperation> bigCommit(SyncTestClient c, String prefix, int n) {
        List<PushOperation> ops = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            // list l2: the victim (subscribed to l1) does not pull the flood, it only shares the partition with it
            Map<String, Object> row = new HashMap<>(TodoClients.todo(prefix + "-" + i, "flood " + i, false));
            row.put("list_id", "l2");
            ops.add(c.upsertOp("todos", row, null));
        }
        return ops;
    }

    @Test
    void aFloodingActorGets429sWhileAnotherActorsPushesApplyPromptly() throws Exception {
        String partition = "fair-" + UUID.randomUUID();
        WebhookResource.hook.answer(r -> Answer.ok("{}"));
        double before = refused("actor_rounds") + refused("actor_operations");
        int flooders = 8;
        List<SyncTestClient> flood = new ArrayList<>();
        for (int i = 0; i < flooders; i++) {
            flood.add(client(partition, "flood"));
        }
        SyncTestClient victim = client(partition, "victim");
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch stopped = new CountDownLatch(1);
        AtomicInteger floodApplied = new AtomicInteger();
        AtomicInteger flood429 = new AtomicInteger();
        List<String> unexpected = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(flooders);
        List<Future<?>> running = new ArrayList<>();
        for (int t = 0; t < flooders; t++) {
            SyncTestClient c = flood.get(t);
            int k = t;
            running.add(pool.submit(() -> {
                go.await();
                String commit = null;
                for (int round = 0; !stop.get(); round++) {
                    if (commit == null || c.result(commit) != null) { // a refused commit is retried, as a client would
                        commit = c.commit(bigCommit(c, "f" + k + "-" + round, 200));
                    }
                    try {
                        c.sync();
                        if (SyncTestClient.applied(c.result(commit))) {
                            floodApplied.incrementAndGet();
                        }
                    } catch (HttpFailure f) {
                        if (f.status == 429 && f.body.contains("\"code\":\"sync.rate_limited\"")) {
                            flood429.incrementAndGet();
                            // a client honours the refusal's retryAfterMs (here: until then, or until the test ends)
                            stopped.await(
                                    JSON.readTree(f.body)
                                            .path("details")
                                            .path("retryAfterMs")
                                            .asLong(),
                                    TimeUnit.MILLISECONDS);
                        } else {
                            unexpected.add(f.status + " " + f.body);
                        }
                    }
                }
                return null;
            }));
        }
        go.countDown();
        List<Long> victimMs = new ArrayList<>();
        try {
            long deadline = System.nanoTime() + DEADLINE.toNanos();
            for (int i = 0; i < 10 || flood429.get() == 0; i++) {
                assertTrue(System.nanoTime() < deadline, "the flood drew no 429 within " + DEADLINE);
                String commit = victim.upsert("todos", TodoClients.todo("victim-" + i, "mine", false), null);
                long started = System.nanoTime();
                victim.sync(); // a 429 here fails the test: the victim is never refused
                victimMs.add((System.nanoTime() - started) / 1_000_000);
                assertTrue(SyncTestClient.applied(victim.result(commit)), "victim push " + i);
            }
        } finally {
            stop.set(true);
            stopped.countDown();
            for (Future<?> f : running) {
                f.get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
            }
            pool.shutdownNow();
        }
        assertEquals(List.of(), unexpected);
        assertTrue(flood429.get() > 0);
        assertTrue(floodApplied.get() > 0, "the flooder keeps its own share");
        List<Long> sorted = new ArrayList<>(victimMs);
        Collections.sort(sorted);
        long max = sorted.get(sorted.size() - 1);
        System.out.printf(
                "fairness: victim pushes %d, p50 %d ms, max %d ms; flooder applied %d, refused %d%n",
                sorted.size(), sorted.get(sorted.size() / 2), max, floodApplied.get(), flood429.get());
        // each victim push waits behind at most the flooder's two admitted 200-operation commits
        assertTrue(max < 5_000, "victim push took " + max + " ms");
        assertTrue(refused("actor_rounds") + refused("actor_operations") >= before + flood429.get());
    }

    @Test
    void aRefusalAnswers429WithRetryAfterBeforeAnyWork() throws Exception {
        String partition = "fair-held-" + UUID.randomUUID();
        CountDownLatch held = new CountDownLatch(1);
        WebhookResource.hook.answer(
                r -> r.body().contains("\"actorId\":\"holder\"") ? new Answer(200, "{}", held) : Answer.ok("{}"));
        SyncTestClient first = client(partition, "holder");
        SyncTestClient second = client(partition, "holder");
        SyncTestClient third = client(partition, "holder");
        String firstCommit = first.upsert("todos", TodoClients.todo("held-1", "one", false), null);
        second.upsert("todos", TodoClients.todo("held-2", "two", false), null);
        third.upsert("todos", TodoClients.todo("refused", "three", false), null);
        byte[] thirdBody = third.buildRequest().encode();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<?> a = pool.submit(() -> first.sync());
            Future<?> b = pool.submit(() -> second.sync());
            // both rounds admitted: one waits on the held validator call, the other for the partition behind it
            long deadline = System.nanoTime() + DEADLINE.toNanos();
            while (PrometheusScrape.scrape().value("syncular_fairness_rounds_in_flight", Map.of()) < 2) {
                assertTrue(System.nanoTime() < deadline, "the two rounds were never in flight together");
            }
            double before = refused("actor_rounds");
            long sent = System.nanoTime();
            HttpResponse<String> r = HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/sync"))
                                    .header("Content-Type", HttpTransport.CONTENT_TYPE)
                                    .header("x-actor-id", "holder")
                                    .header("x-syncular-partition", partition)
                                    .POST(HttpRequest.BodyPublishers.ofByteArray(thirdBody))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
            assertEquals(429, r.statusCode(), r.body());
            // syncular.fairness.refusal-hold (1 s): answered after 1 s of its 2 s wait, told the rest
            assertTrue(
                    System.nanoTime() - sent >= TimeUnit.MILLISECONDS.toNanos(1000),
                    "held for syncular.fairness.refusal-hold");
            assertEquals("1", r.headers().firstValue("Retry-After").orElseThrow());
            JsonNode body = JSON.readTree(r.body());
            assertEquals("sync.rate_limited", body.path("code").asText());
            assertTrue(body.path("retryable").asBoolean());
            assertEquals("actor_rounds", body.path("details").path("reason").asText());
            assertEquals(1000, body.path("details").path("retryAfterMs").asLong());
            assertEquals(before + 1, refused("actor_rounds"));
            // a socket round (§8.7) of the same actor is admitted by the same limits: refused in-band, retryable
            RealtimeSocket socket =
                    RealtimeSocket.connect("http://localhost:" + port + "/", partition, "holder", third.clientId);
            try {
                socket.nextEvent("hello");
                ErrorFrame error =
                        (ErrorFrame) MessageDecoder.decodeResponse(socket.round(thirdBody, 1 << 16)).frames().stream()
                                .filter(f -> f instanceof ErrorFrame)
                                .findFirst()
                                .orElseThrow();
                assertEquals("sync.rate_limited", error.code());
                assertTrue(error.retryable());
            } finally {
                socket.ws.abort();
            }
            assertEquals(before + 2, refused("actor_rounds"));
            // refused before its body (issue 45: no reading or decoding): a request whose declared body never comes
            try (RawHttp http = RawHttp.open("localhost", port)) {
                RawHttp.Answer early = http.head(
                                "POST",
                                "/sync",
                                Map.of(
                                        "Content-Type",
                                        HttpTransport.CONTENT_TYPE,
                                        "Content-Length",
                                        "100000",
                                        "x-actor-id",
                                        "holder",
                                        "x-syncular-partition",
                                        partition))
                        .read();
                assertEquals(429, early.status(), early.body());
                assertEquals(
                        "actor_rounds",
                        JSON.readTree(early.body())
                                .path("details")
                                .path("reason")
                                .asText());
            }
            assertEquals(before + 3, refused("actor_rounds"));
            // another actor of the same partition is admitted meanwhile (it waits for the partition, not for a place)
            SyncTestClient other = client(partition, "other");
            assertTrue(other.state.logEpoch != null);
            held.countDown();
            a.get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
            b.get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
        } finally {
            held.countDown();
            pool.shutdownNow();
        }
        // nothing of the refused round was applied; its retry, once a place is free, applies
        assertTrue(SyncTestClient.applied(first.result(firstCommit)));
        third.syncUntilIdle();
        assertTrue(third.table("todos").containsKey("refused"));
    }

    /**
     * Issue 45, bootstrap concurrency: with one bootstrapping round of a partition in flight (held by its push's
     * validator call), a second round of the partition that starts a bootstrap is 429 {@code partition_bootstraps}
     * before any work, while in the same moment an incremental round of the partition and another tenant's bootstrap
     * are served; once the first ends, the refused bootstrap completes on retry.
     */
    @Test
    void aSecondBootstrapOfAPartitionWaitsWhileOthersAreServed() throws Exception {
        String partition = "fair-boot-" + UUID.randomUUID();
        CountDownLatch held = new CountDownLatch(1);
        WebhookResource.hook.answer(
                r -> r.body().contains("\"actorId\":\"booter\"") ? new Answer(200, "{}", held) : Answer.ok("{}"));
        SyncTestClient settled = client(partition, "settled");
        // a fresh client whose first round pushes and bootstraps: held in its validator call
        SyncTestClient booter = new SyncTestClient(
                        window.current(),
                        new HttpTransport("http://localhost:" + port, partition),
                        "booter",
                        "booter-" + UUID.randomUUID())
                .subscribe("todos", "todos", Map.of("list_id", List.of("l1")));
        booter.state.logEpoch = settled.state.logEpoch;
        String booted = booter.upsert("todos", TodoClients.todo("booted", "held", false), null);
        double before = refused("partition_bootstraps");
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<?> first = pool.submit(() -> booter.sync());
            long deadline = System.nanoTime() + DEADLINE.toNanos();
            while (WebhookResource.hook.received.stream()
                    .noneMatch(r -> r.body().contains("booter"))) {
                assertTrue(System.nanoTime() < deadline, "the bootstrapping round never reached its validator");
            }
            HttpFailure f =
                    org.junit.jupiter.api.Assertions.assertThrows(HttpFailure.class, () -> client(partition, "second"));
            assertEquals(429, f.status, f.body);
            JsonNode body = JSON.readTree(f.body);
            assertEquals("sync.rate_limited", body.path("code").asText());
            assertEquals(
                    "partition_bootstraps", body.path("details").path("reason").asText());
            assertEquals(1000, body.path("details").path("retryAfterMs").asLong(), "2 s less the 1 s held");
            assertEquals(before + 1, refused("partition_bootstraps"));
            // the same moment: an incremental round of the partition, and another tenant's bootstrap
            settled.sync();
            SyncTestClient elsewhere = client("fair-boot-other-" + UUID.randomUUID(), "elsewhere");
            assertTrue(elsewhere.state.logEpoch != null);
            held.countDown();
            first.get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
        } finally {
            held.countDown();
            pool.shutdownNow();
        }
        assertTrue(SyncTestClient.applied(booter.result(booted)));
        SyncTestClient second = client(partition, "second");
        assertTrue(second.table("todos").containsKey("booted"));
    }
}
