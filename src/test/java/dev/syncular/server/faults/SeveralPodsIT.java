package dev.syncular.server.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.testsupport.HeldTransaction;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.PushLoad;
import dev.syncular.server.testsupport.ServerProcess;
import dev.syncular.server.testsupport.StartsProcesses;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.ThrowawayPostgres;
import dev.syncular.server.wire.CommitStatus;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Several pods and long uptime (issue #17): two packaged servers as two operating-system processes on one
 * PostgreSQL of the test's own ({@link ThrowawayPostgres}, so it can be restarted), pushed to by clients that
 * spread their rounds over both pods and retry failed rounds with the same outbox (§2.3, §7.2). After each
 * disruption every client commit must be in the commit log exactly once — checked in SQL — and the log dense.
 */
@StartsProcesses
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SeveralPodsIT {
    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final String SCHEMA =
            "it_pods_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final ObjectMapper JSON = new ObjectMapper();

    static ThrowawayPostgres pg;
    static ServerProcess podA;
    static ServerProcess podB;
    static CompiledSchema schema;
    static Vertx vertx;
    static Pool pool;

    static ServerProcess.Builder pod(String name, int port) {
        return ServerProcess.builder("several-pods-" + name, SCHEMA)
                .env("QUARKUS_DATASOURCE_REACTIVE_URL", pg.url())
                .env("SYNCULAR_STORAGE_LOCK_TIMEOUT", "2s")
                .env("SYNCULAR_STORAGE_MAX_QUEUED_PUSHES_PER_PARTITION", "32")
                .port(port);
    }

    @BeforeAll
    static void start() throws Exception {
        schema = SchemaLoader.parse(Files.readString(ServerProcess.BUNDLED_SCHEMA));
        pg = ThrowawayPostgres.start();
        vertx = Vertx.vertx();
        pool = pg.pool(vertx, 4);
        podA = pod("a", 0).start();
        podB = pod("b", 0).start();
    }

    @AfterAll
    static void stop() throws Exception {
        ServerProcess.closeAll(podA, podB);
        if (pool != null) {
            pool.close().await().atMost(WAIT);
            vertx.close().await().atMost(WAIT);
        }
        if (pg != null) {
            pg.close();
        }
    }

    private static List<String> pods() {
        return List.of(podA.baseUrl(), podB.baseUrl());
    }

    /**
     * Every commit the clients queued has exactly one result (applied or cached) and exactly one entry in the
     * commit log; the log holds nothing else and is dense (§2.1); one idempotency record per commit (§2.3).
     */
    private static void assertExactlyOnce(PushLoad load, String partition) {
        assertFalse(load.results.isEmpty());
        load.results.forEach((id, statuses) -> {
            assertEquals(1, statuses.size(), "one result for " + id);
            assertTrue(
                    statuses.get(0) == CommitStatus.APPLIED || statuses.get(0) == CommitStatus.CACHED,
                    id + ": " + statuses);
        });
        Map<String, Long> logged = new HashMap<>();
        for (Row r : pool.preparedQuery("SELECT client_commit_id, count(*) FROM \"" + SCHEMA + "\".sync_commits"
                        + " WHERE partition_id = $1 GROUP BY 1")
                .execute(Tuple.of(partition))
                .await()
                .atMost(WAIT)) {
            logged.put(r.getString(0), r.getLong(1));
        }
        assertEquals(load.results.keySet(), logged.keySet(), "every queued commit is in the log, and nothing else");
        logged.forEach((id, n) -> assertEquals(1L, n, "applied exactly once: " + id));
        Row dense = pool.preparedQuery("SELECT count(*), max(commit_seq), (SELECT max_commit_seq FROM \"" + SCHEMA
                        + "\".sync_partitions WHERE partition_id = $1), (SELECT count(*) FROM \"" + SCHEMA
                        + "\".sync_push_results WHERE partition_id = $1) FROM \"" + SCHEMA
                        + "\".sync_commits WHERE partition_id = $1")
                .execute(Tuple.of(partition))
                .await()
                .atMost(WAIT)
                .iterator()
                .next();
        assertEquals(dense.getLong(0), dense.getLong(1), "commit seqs are dense");
        assertEquals(dense.getLong(1), dense.getLong(2));
        assertEquals(dense.getLong(0), dense.getLong(3), "one idempotency record per commit");
        System.out.printf(
                "%s: %,d commits from %d clients applied exactly once; %,d retried after failed rounds %s;"
                        + " round p50 %d ms, p99 %d ms, max %d ms%n",
                partition,
                load.results.size(),
                load.clientIds().size(),
                load.retried.size(),
                load.failures,
                load.percentileMs(50, Long.MIN_VALUE, Long.MAX_VALUE),
                load.percentileMs(99, Long.MIN_VALUE, Long.MAX_VALUE),
                load.percentileMs(100, Long.MIN_VALUE, Long.MAX_VALUE));
    }

    /** The partition's row lock, as a push holds it. */
    private static String lockPartition(String partition) {
        return "SELECT 1 FROM \"" + SCHEMA + "\".sync_partitions WHERE partition_id = '" + partition + "' FOR UPDATE";
    }

    /** Every table of the storage, held ROW EXCLUSIVE — what in-flight pushes hold. */
    private static String lockEveryTable() {
        List<String> tables = new ArrayList<>();
        for (Row r : pool.preparedQuery("SELECT quote_ident(table_schema) || '.' || quote_ident(table_name)"
                        + " FROM information_schema.tables WHERE table_schema = $1")
                .execute(Tuple.of(SCHEMA))
                .await()
                .atMost(WAIT)) {
            tables.add(r.getString(0));
        }
        return "LOCK TABLE " + String.join(", ", tables) + " IN ROW EXCLUSIVE MODE";
    }

    /**
     * A rolling restart under push load — each pod SIGTERMed (graceful shutdown) and started again — loses and
     * duplicates no commit. While pod B boots again, every table is held ROW EXCLUSIVE as in-flight pushes hold
     * it: the boot still becomes ready (it issues no DDL on an up-to-date schema) and the pushes go on.
     */
    @Test
    @Order(1)
    void aRollingRestartLosesAndDuplicatesNoCommit() throws Exception {
        String partition = "rolling-" + UUID.randomUUID();
        PushLoad load = new PushLoad(schema, partition, pods()).start(4);
        load.awaitMore(200, WAIT);
        try (HeldTransaction inFlightPushes = HeldTransaction.begin(pool, lockEveryTable())) {
            assertEquals(143, podB.stop(Duration.ofSeconds(30)), "graceful exit");
            podB = pod("b", podB.port()).start();
            load.awaitMore(200, WAIT);
        }
        assertEquals(143, podA.stop(Duration.ofSeconds(30)));
        podA = pod("a", podA.port()).start();
        load.awaitMore(200, WAIT);
        load.stop();
        assertExactlyOnce(load, partition);
    }

    /**
     * {@code kill -9} of a pod in the middle of a push: the push waits for its partition lock (held by the test)
     * on pod A when A dies; the client retries the same commit on pod B, which applies it exactly once (A's
     * transaction never committed). Then the same under load, killing at an arbitrary moment.
     */
    @Test
    @Order(2)
    void killNineMidPushAndTheRetryOnTheOtherPodAppliesOnce() throws Exception {
        String partition = "kill-" + UUID.randomUUID();
        AtomicReference<HttpTransport> target = new AtomicReference<>(new HttpTransport(podA.baseUrl(), partition));
        SyncTestClient c = new SyncTestClient(
                schema,
                new SyncTestClient.Transport() {
                    @Override
                    public byte[] roundTrip(SyncTestClient client, byte[] request) {
                        return target.get().roundTrip(client, request);
                    }

                    @Override
                    public byte[] downloadSegment(SyncTestClient client, String segmentId, String scopesHeader) {
                        return target.get().downloadSegment(client, segmentId, scopesHeader);
                    }
                },
                "killer",
                "c-kill-" + UUID.randomUUID());
        c.sync(); // the log epoch; registers the partition
        String commit = c.upsert("todos", todo("mid-push"), null);
        CompletableFuture<Void> inFlight;
        try (HeldTransaction partitionLock = HeldTransaction.begin(pool, lockPartition(partition))) {
            inFlight = CompletableFuture.runAsync(c::sync);
            partitionLock.awaitBlocked(); // pod A's push transaction waits for the partition lock
            podA.kill();
            Throwable failed = assertThrows(
                            ExecutionException.class, () -> inFlight.get(WAIT.toSeconds(), TimeUnit.SECONDS))
                    .getCause();
            assertInstanceOf(UncheckedIOException.class, failed, "the round died with the pod");
        }
        target.set(new HttpTransport(podB.baseUrl(), partition));
        c.sync();
        assertEquals(CommitStatus.APPLIED, c.result(commit).status(), "the retry on pod B applied it");
        assertEquals(
                1L,
                pool.preparedQuery("SELECT count(*) FROM \"" + SCHEMA + "\".sync_commits WHERE partition_id = $1"
                                + " AND client_commit_id = $2")
                        .execute(Tuple.of(partition, commit))
                        .await()
                        .atMost(WAIT)
                        .iterator()
                        .next()
                        .getLong(0));
        podA = pod("a", podA.port()).start();

        String loaded = "kill-load-" + UUID.randomUUID();
        PushLoad load = new PushLoad(schema, loaded, pods()).start(4);
        load.awaitMore(200, WAIT);
        podA.kill();
        load.awaitMore(200, WAIT);
        podA = pod("a", podA.port()).start();
        load.awaitMore(100, WAIT);
        load.stop();
        assertTrue(
                load.failures.containsKey("io") && !load.retried.isEmpty(),
                "rounds died with pod A and their commits were retried: " + load.failures);
        assertExactlyOnce(load, loaded);
    }

    /**
     * A PostgreSQL restart mid-load recovers without operator action: while the database is down the pods
     * answer 429 {@code storage_unavailable} and report DOWN (each readiness failure logged with its cause), the clients retry, and once
     * it is back every retry succeeds, readiness returns UP on both pods, and no commit is lost or doubled.
     */
    @Test
    @Order(3)
    void aPostgresRestartMidLoadRecoversOnItsOwn() throws Exception {
        String partition = "pg-restart-" + UUID.randomUUID();
        PushLoad load = new PushLoad(schema, partition, pods()).start(4);
        load.awaitMore(200, WAIT);
        pg.stop();
        // while the database is down each pod reports DOWN (and logs why); probed here, as the kubelet would
        for (ServerProcess p : new ServerProcess[] {podA, podB}) {
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (p.status("/q/health/ready") == 200) {
                assertTrue(System.nanoTime() < deadline, "readiness DOWN while the database is down");
            }
        }
        pg.startAgain();
        load.awaitMore(300, WAIT);
        for (ServerProcess p : new ServerProcess[] {podA, podB}) {
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (p.status("/q/health/ready") != 200) {
                assertTrue(System.nanoTime() < deadline, "readiness back UP");
            }
        }
        load.stop();
        assertExactlyOnce(load, partition);
        // felt as 429 sync.rate_limited storage_unavailable (retryable, with Retry-After) since issue 44, 500 before
        assertTrue(!load.failures.isEmpty(), "the restart was felt: " + load.failures);
        assertTrue(
                podA.log().contains("readiness DOWN (storage_unavailable)")
                        || podB.log().contains("readiness DOWN (storage_unavailable)"),
                "readiness failures are logged with their cause");
    }

    /**
     * Backpressure through the running app (§10.2 {@code sync.rate_limited}): while the test holds a partition's
     * lock, pushes to it on one pod wait at most {@code lock-timeout} (2 s) and at most 32 wait in the pod's queue;
     * every other answer is immediate. All are 429 with {@code Retry-After} — never a 500 — and once the lock is
     * free each client's retry applies its commit exactly once.
     */
    @Test
    @Order(4)
    void aBusyPartitionAnswersRateLimitedWithRetryAfter() throws Exception {
        String partition = "busy-" + UUID.randomUUID();
        List<SyncTestClient> clients = clientsWithOneCommit(podA, partition, 48);
        Map<String, Integer> reasons = new LinkedHashMap<>();
        try (HeldTransaction partitionLock = HeldTransaction.begin(pool, lockPartition(partition))) {
            List<CompletableFuture<HttpResponse<String>>> sent = new ArrayList<>();
            for (SyncTestClient c : clients) {
                sent.add(send(podA, partition, c));
            }
            for (CompletableFuture<HttpResponse<String>> f : sent) {
                HttpResponse<String> r = f.get(WAIT.toSeconds(), TimeUnit.SECONDS);
                assertEquals(429, r.statusCode(), r.body());
                assertEquals("1", r.headers().firstValue("Retry-After").orElse(null));
                JsonNode body = JSON.readTree(r.body());
                assertEquals("sync.rate_limited", body.get("code").asText());
                assertTrue(body.get("retryable").asBoolean());
                reasons.merge(body.get("details").get("reason").asText(), 1, Integer::sum);
            }
        }
        assertTrue(reasons.containsKey("queue_full") && reasons.containsKey("lock_timeout"), reasons.toString());
        Set<String> commits = eachRetryApplies(clients);
        Row logged = pool.preparedQuery("SELECT count(*) FILTER (WHERE client_commit_id = ANY($2)), count(*)"
                        + " FROM \"" + SCHEMA + "\".sync_commits WHERE partition_id = $1")
                .execute(Tuple.of(partition).addArrayOfString(commits.toArray(String[]::new)))
                .await()
                .atMost(WAIT)
                .iterator()
                .next();
        assertEquals(48L, logged.getLong(0), "each commit applied once");
        assertEquals(48L, logged.getLong(1), "nothing from the refused attempts");
    }

    /**
     * A bounded wait for a pooled connection: on a pod with one connection and one waiter allowed, while a push
     * holds the connection (waiting for a partition lock the test holds), one more request waits and the next
     * is answered 429 {@code sync.rate_limited} ({@code pool_wait_queue_full}) at once, instead of queueing
     * without bound; every refused commit applies exactly once when retried.
     */
    @Test
    @Order(5)
    void aFullConnectionPoolAnswersRateLimited() throws Exception {
        String partition = "pool-" + UUID.randomUUID();
        try (ServerProcess podC = pod("c", 0)
                .env("QUARKUS_DATASOURCE_REACTIVE_MAX_SIZE", "1")
                .env("SYNCULAR_STORAGE_POOL_MAX_WAITERS", "1")
                .start()) {
            List<SyncTestClient> clients = clientsWithOneCommit(podC, partition, 3);
            List<HttpResponse<String>> answers = new ArrayList<>();
            try (HeldTransaction partitionLock = HeldTransaction.begin(pool, lockPartition(partition))) {
                CompletableFuture<HttpResponse<String>> holder = send(podC, partition, clients.get(0));
                partitionLock.awaitBlocked(); // the pod's one connection waits for the partition lock
                CompletableFuture<HttpResponse<String>> second = send(podC, partition, clients.get(1));
                CompletableFuture<HttpResponse<String>> third = send(podC, partition, clients.get(2));
                HttpResponse<String> refused = CompletableFuture.anyOf(second, third)
                        .thenApply(r -> (HttpResponse<String>) r)
                        .get(WAIT.toSeconds(), TimeUnit.SECONDS);
                assertFalse(holder.isDone(), "refused while the connection was still held");
                assertEquals(429, refused.statusCode(), refused.body());
                assertEquals("1", refused.headers().firstValue("Retry-After").orElse(null));
                assertEquals(
                        "pool_wait_queue_full",
                        JSON.readTree(refused.body())
                                .get("details")
                                .get("reason")
                                .asText());
                for (CompletableFuture<HttpResponse<String>> f : List.of(holder, second, third)) {
                    answers.add(f.get(WAIT.toSeconds(), TimeUnit.SECONDS));
                }
            }
            for (HttpResponse<String> r : answers) {
                assertEquals(429, r.statusCode(), "busy, never a 500: " + r.body());
            }
            eachRetryApplies(clients);
            assertEquals(
                    3L,
                    pool.preparedQuery("SELECT count(*) FROM \"" + SCHEMA + "\".sync_commits WHERE partition_id = $1")
                            .execute(Tuple.of(partition))
                            .await()
                            .atMost(WAIT)
                            .iterator()
                            .next()
                            .getLong(0));
        }
    }

    /**
     * {@code n} clients of {@code pod}, each with the log epoch and one commit in its outbox, each of its own actor
     * (one shared actor would meet {@code syncular.fairness.max-rounds-per-actor}, 429 {@code actor_rounds}, before
     * the partition's queue).
     */
    private static List<SyncTestClient> clientsWithOneCommit(ServerProcess pod, String partition, int n) {
        List<SyncTestClient> clients = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            SyncTestClient c = new SyncTestClient(
                    schema, new HttpTransport(pod.baseUrl(), partition), "busy-" + i, partition + "-c" + i);
            c.sync();
            c.upsert("todos", todo(partition + "-" + i), null);
            clients.add(c);
        }
        return clients;
    }

    /** Each client's retry of its one commit is applied; yields the commit ids. */
    private static Set<String> eachRetryApplies(List<SyncTestClient> clients) {
        Set<String> commits = new HashSet<>();
        for (SyncTestClient c : clients) {
            String id = c.outbox.get(0).clientCommitId();
            c.sync();
            assertEquals(CommitStatus.APPLIED, c.result(id).status());
            commits.add(id);
        }
        return commits;
    }

    private static CompletableFuture<HttpResponse<String>> send(ServerProcess pod, String partition, SyncTestClient c) {
        return HTTP.sendAsync(
                HttpRequest.newBuilder(URI.create(pod.baseUrl() + "/sync"))
                        .header("content-type", HttpTransport.CONTENT_TYPE)
                        .header("x-actor-id", c.actorId)
                        .header("x-syncular-partition", partition)
                        .timeout(WAIT)
                        .POST(HttpRequest.BodyPublishers.ofByteArray(
                                c.buildRequest().encode()))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** Signed URLs (§5.4) are verified by whichever pod a client reaches: prod refuses to start without the shared key. */
    @Test
    @Order(6)
    void prodRefusesToStartWithoutTheSharedSigningKey() {
        IllegalStateException e = assertThrows(
                IllegalStateException.class,
                () -> pod("no-key", 0).env("SYNCULAR_SIGNED_URLS_KEY", "").start());
        assertTrue(
                e.getMessage().contains("exited during start-up")
                        && e.getMessage().contains("syncular.signed-urls.key"),
                e.getMessage());
    }

    static Map<String, Object> todo(String id) {
        return Map.of(
                "id", id, "list_id", "l1", "title", "t " + id, "done", false, "position", 1L, "updated_at_ms", 1L);
    }
}
