package dev.syncular.server.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.ServerProcess;
import dev.syncular.server.testsupport.StartsProcesses;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestPostgres;
import dev.syncular.server.testsupport.TestWebhook;
import dev.syncular.server.testsupport.TestWebhook.Answer;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.Tuple;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Durable reactions (§6.9) survive the death of the pod delivering them: two packaged servers as two
 * operating-system processes on one PostgreSQL storage schema, and a real webhook endpoint started by the test.
 * Pod A plans a reaction with a pushed commit and starts delivering it; the endpoint holds that first request open;
 * the test kills pod A ({@code kill -9}) mid-call. Pod B, started afterwards on the same database, claims the
 * reaction once A's claim lease has expired and delivers it again with the same {@code Idempotency-Key}: delivered
 * at least once, completed exactly once.
 */
@StartsProcesses
class ReactionRestartIT {
    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String SECRET = "reaction-restart-secret-0123456789abcdef";
    private static final String PG_SCHEMA =
            "it_react_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);

    static TestWebhook hook;
    static Path policy;
    static CompiledSchema schema;
    static Vertx vertx;
    static Pool pool;
    static ServerProcess podA;
    static ServerProcess podB;

    @BeforeAll
    static void start() throws Exception {
        hook = new TestWebhook();
        schema = SchemaLoader.parse(Files.readString(ServerProcess.BUNDLED_SCHEMA));
        policy = Files.createTempFile("reaction-restart-policy", ".json");
        Files.writeString(
                policy,
                "{\"reactions\":[{\"table\":\"todos\",\"when\":{\"column\":\"done\",\"equals\":true},"
                        + "\"type\":\"todo.completed\",\"maxAttempts\":5}]}");
        vertx = Vertx.vertx();
        pool = TestPostgres.pool(vertx, 2);
    }

    @AfterAll
    static void stop() throws Exception {
        ServerProcess.closeAll(podA, podB);
        if (hook != null) {
            hook.close();
        }
        if (pool != null) {
            pool.close().await().atMost(WAIT);
            vertx.close().await().atMost(WAIT);
        }
        TestPostgres.dropSchema(PG_SCHEMA);
        if (policy != null) {
            Files.deleteIfExists(policy);
        }
    }

    private static ServerProcess.Builder pod(String name) {
        return ServerProcess.builder("reaction-restart-" + name, PG_SCHEMA)
                .config(Map.of(
                        "syncular.policy.file",
                        policy.toAbsolutePath().toString(),
                        "syncular.reactions.webhook.url",
                        hook.url("/reactions"),
                        "syncular.reactions.webhook.secret",
                        SECRET,
                        // the held call must outlive the kill: only the claim lease ends A's hold on the reaction
                        "syncular.reactions.webhook.timeout",
                        "60s",
                        "syncular.reactions.lease",
                        "3s",
                        "syncular.reactions.poll-interval",
                        "200ms"));
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        CountDownLatch never = new CountDownLatch(1);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            // a poll with a deadline: the condition reads the endpoint's requests or the database
            never.await(50, TimeUnit.MILLISECONDS);
        }
    }

    private static RowSet<Row> reactions(String partition) {
        return pool.preparedQuery("SELECT status, attempts, completed_at_ms, idempotency_key FROM \"" + PG_SCHEMA
                        + "\".sync_reactions WHERE partition_id = $1")
                .execute(Tuple.of(partition))
                .await()
                .atMost(WAIT);
    }

    private static List<TestWebhook.Received> deliveries(String partition) {
        return hook.received.stream().filter(r -> r.body().contains(partition)).toList();
    }

    @Test
    void aPodKilledMidDeliveryIsTakenOverAndTheReactionCompletesOnce() throws Exception {
        String partition = "restart-" + UUID.randomUUID();
        CountDownLatch release = new CountDownLatch(1);
        hook.then(new Answer(200, "{}", release)); // the first delivery is held open until released
        podA = pod("a").start();

        SyncTestClient client = new SyncTestClient(
                        schema, new HttpTransport(podA.baseUrl(), partition), "alice", "alice-" + UUID.randomUUID())
                .subscribe("todos", "todos", Map.of("list_id", List.of("l1")));
        client.syncUntilIdle();
        String commit = client.upsert("todos", TodoClients.todo("t1", "ship it", true), null);
        client.syncUntilIdle();
        assertTrue(SyncTestClient.applied(client.result(commit)));

        await("pod A's first delivery", () -> deliveries(partition).size() == 1);
        podA.kill(); // SIGKILL while the endpoint holds the call: no completion is ever recorded by A
        Row leased = reactions(partition).iterator().next();
        assertEquals("leased", leased.getString(0), "A died holding the claim");
        assertEquals(1, leased.getInteger(1));

        podB = pod("b").start();
        await("pod B's takeover", () -> {
            RowSet<Row> rows = reactions(partition);
            return rows.size() == 1 && "completed".equals(rows.iterator().next().getString(0));
        });
        release.countDown();

        List<TestWebhook.Received> sent = deliveries(partition);
        assertEquals(2, sent.size(), "delivered at least once: A's interrupted call, then B's");
        String key =
                "[\"" + partition + "\",\"" + client.clientId + "\",\"" + commit + "\",\"todo.completed:todos:t1\"]";
        for (TestWebhook.Received r : sent) {
            assertEquals(key, r.header("Idempotency-Key"), "the same key on every attempt");
            assertTrue(TestWebhook.signed(r.header("Syncular-Signature"), r.body(), SECRET));
        }
        JsonNode first = JSON.readTree(sent.get(0).body());
        JsonNode second = JSON.readTree(sent.get(1).body());
        assertEquals(first.path("id").asLong(), second.path("id").asLong(), "one reaction");
        assertEquals(1, first.path("attempt").asInt());
        assertEquals(2, second.path("attempt").asInt());

        RowSet<Row> rows = reactions(partition);
        assertEquals(1, rows.size(), "one reaction row");
        Row done = rows.iterator().next();
        assertEquals("completed", done.getString(0), "completed exactly once");
        assertEquals(2, done.getInteger(1));
        assertNotNull(done.getLong(2));
        assertEquals(key, done.getString(3));
        assertFalse(podA.alive());
        assertTrue(podB.alive());
    }
}
