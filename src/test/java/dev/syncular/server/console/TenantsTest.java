package dev.syncular.server.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.jobs.TenantLoadJob;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.storage.TenantLoadRow;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.PrometheusScrape;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.SyncTestClient;
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
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;

/**
 * The loudest tenants through the running app, real PostgreSQL and real HTTP rounds: a partition that pushes much more
 * than another is the first of this pod's {@code syncular_tenant_top_committed_bytes} series with its committed bytes,
 * its realtime deltas count as its fan-out bytes, and the console's Tenants page (in the real headless Chromium) lists
 * it first, from the table every pod publishes to; a partition whose actor is refused by a fairness limit
 * ({@code sync.rate_limited}, {@code actor_rounds}) has its refusals under its own name in the gauges and in the merged
 * view. Conditions are polled with a deadline, never slept on.
 */
@QuarkusTest
@OwnApp
@TestProfile(TenantsTest.Profile.class)
class TenantsTest {
    static final String TOKEN = "tenants-admin-" + UUID.randomUUID();
    static final String SCHEMA =
            "sync_tenants_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    private static final Duration DEADLINE = Duration.ofSeconds(60);

    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "syncular.admin.token", TOKEN,
                    "syncular.storage.pg-schema", SCHEMA,
                    "syncular.tenants.publish-interval", "1s",
                    "syncular.tenants.top-n", "5",
                    // one round of an actor at a time: a second one at once is refused (actor_rounds)
                    "syncular.fairness.max-rounds-per-actor", "1");
        }
    }

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    @Inject
    SchemaWindow window;

    @Inject
    TenantLoadJob tenants;

    private SyncTestClient client(String partition, String actor) {
        SyncTestClient c = new SyncTestClient(
                        window.current(),
                        new HttpTransport("http://localhost:" + port, partition),
                        actor,
                        actor + "-" + UUID.randomUUID())
                .subscribe("todos", "todos", Map.of("list_id", List.of("l1")));
        c.syncUntilIdle();
        return c;
    }

    private static Map<String, Object> todo(String id, String title) {
        return Map.of("id", id, "list_id", "l1", "title", title, "done", false, "position", 1L, "updated_at_ms", 0L);
    }

    private static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, what + " within " + DEADLINE);
            Thread.onSpinWait();
        }
    }

    private static <T> T awaitValue(String what, Supplier<T> read, Predicate<T> done) {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (true) {
            T v = read.get();
            if (done.test(v)) {
                return v;
            }
            assertTrue(System.nanoTime() < deadline, what + " within " + DEADLINE + ": " + v);
        }
    }

    private static Map<String, Double> series(String metric) {
        return PrometheusScrape.scrape().values(metric);
    }

    @Test
    void theLoudPartitionIsFirstInTheGaugesAndOnTheTenantsPage() throws Exception {
        String loud = "tenant-loud-" + UUID.randomUUID();
        String quiet = "tenant-quiet-" + UUID.randomUUID();
        SyncTestClient listener = client(loud, "listener");
        RealtimeSocket socket =
                RealtimeSocket.connect("http://localhost:" + port + "/", loud, "listener", listener.clientId);
        socket.nextEvent("hello");
        SyncTestClient pusher = client(loud, "pusher");
        String title = "x".repeat(2000);
        for (int i = 0; i < 20; i++) {
            pusher.upsert("todos", todo("loud-" + i, title + i), null);
            pusher.syncUntilIdle();
        }
        SyncTestClient small = client(quiet, "pusher");
        small.upsert("todos", todo("quiet-1", "q"), null);
        small.syncUntilIdle();
        socket.nextDelta(); // a delta of the loud partition went out to its socket

        // the gauges: only this pod's top partitions, the loud one first with its committed bytes
        Map<String, Double> committed = awaitValue(
                "the loud partition's committed bytes in the gauges",
                () -> series("syncular_tenant_top_committed_bytes"),
                s -> s.getOrDefault("{partition=" + loud + "}", 0.0) > 40_000
                        && s.containsKey("{partition=" + quiet + "}"));
        double loudBytes = committed.get("{partition=" + loud + "}");
        double quietBytes = committed.get("{partition=" + quiet + "}");
        assertTrue(loudBytes > 20 * quietBytes, committed.toString());
        assertEquals(
                loudBytes,
                committed.values().stream()
                        .mapToDouble(Double::doubleValue)
                        .max()
                        .orElseThrow(),
                "the loud partition is the first: " + committed);
        assertTrue(committed.size() <= 5, "at most top-n series: " + committed);
        awaitValue(
                "the loud partition's fan-out bytes",
                () -> series("syncular_tenant_top_fanout_bytes"),
                s -> s.getOrDefault("{partition=" + loud + "}", 0.0) > 2000);
        awaitValue(
                "the loud partition's database time",
                () -> series("syncular_tenant_top_database_seconds"),
                s -> s.getOrDefault("{partition=" + loud + "}", 0.0) > 0);

        // the merged view every pod reads from the table: loud first by committed bytes
        List<TenantLoadRow> board = awaitValue(
                "the published rows",
                () -> tenants.board(TenantLoadJob.Figure.COMMITTED).await().atMost(DEADLINE),
                rows -> !rows.isEmpty()
                        && rows.get(0).partition().equals(loud)
                        && rows.get(0).committedBytes() >= (long) loudBytes);
        assertTrue(board.stream().anyMatch(r -> r.partition().equals(quiet)), board.toString());

        // the console's Tenants page in the real browser: the loud partition first, linked to its partition page
        try (ConsoleBrowser b = new ConsoleBrowser("http://localhost:" + port + "/console")) {
            b.signIn(TOKEN);
            b.find("a[href$='/tenants']").click();
            b.until(d -> d.getCurrentUrl().endsWith("/console/tenants"));
            assertEquals("Tenants", b.find("main h1").getText());
            b.find("#by-committed").click();
            b.reloadUntil(d -> {
                List<WebElement> rows = d.findElements(By.cssSelector("#tenants tbody tr[data-partition]"));
                return !rows.isEmpty() && loud.equals(rows.get(0).getAttribute("data-partition"));
            });
            String first = "#tenants tbody tr[data-partition]:first-child";
            assertTrue(
                    Long.parseLong(b.text(first + " td[data-figure='committed']")) >= (long) loudBytes,
                    "committed bytes shown");
            assertTrue(Long.parseLong(b.text(first + " td[data-figure='fanout']")) > 0, "fan-out bytes shown");
            b.screenshot("tenants");
            b.find(first + " a").click();
            b.until(d -> d.getCurrentUrl().endsWith("/console/partition?id=" + loud));
        } finally {
            socket.ws.abort();
        }
    }

    @Test
    void refusalsAppearUnderTheRefusedPartition() throws Exception {
        String partition = "tenant-refused-" + UUID.randomUUID();
        List<SyncTestClient> clients = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            clients.add(client(partition, "eager"));
        }
        HttpClient http = HttpClient.newHttpClient();
        // rounds of one actor sent together until the second of two at once is refused with actor_rounds
        await("a round refused with sync.rate_limited", () -> {
            List<CompletableFuture<HttpResponse<String>>> sent = new ArrayList<>();
            for (SyncTestClient c : clients) {
                sent.add(http.sendAsync(
                        HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/sync"))
                                .header("Content-Type", HttpTransport.CONTENT_TYPE)
                                .header("x-actor-id", "eager")
                                .header("x-syncular-partition", partition)
                                .POST(HttpRequest.BodyPublishers.ofByteArray(
                                        c.buildRequest().encode()))
                                .build(),
                        HttpResponse.BodyHandlers.ofString()));
            }
            boolean refused = false;
            for (CompletableFuture<HttpResponse<String>> f : sent) {
                HttpResponse<String> r = f.join();
                if (r.statusCode() == 429) {
                    assertTrue(r.body().contains("\"reason\":\"actor_rounds\""), r.body());
                    refused = true;
                } else {
                    assertEquals(200, r.statusCode(), r.body());
                }
            }
            return refused;
        });

        awaitValue(
                "the partition's refusals in the gauges",
                () -> series("syncular_tenant_top_refusals"),
                s -> s.getOrDefault("{partition=" + partition + ", reason=actor_rounds}", 0.0) >= 1);
        List<TenantLoadRow> board = awaitValue(
                "the partition's refusals in the merged view",
                () -> tenants.board(TenantLoadJob.Figure.REFUSALS).await().atMost(DEADLINE),
                rows -> rows.stream()
                        .anyMatch(r ->
                                r.partition().equals(partition) && r.refusals().getOrDefault("actor_rounds", 0L) >= 1));
        TenantLoadRow refused = board.stream()
                .filter(r -> r.partition().equals(partition))
                .findFirst()
                .orElseThrow();
        assertEquals(Map.of("actor_rounds", refused.refusalCount()), refused.refusals(), "only fairness refusals");
    }
}
