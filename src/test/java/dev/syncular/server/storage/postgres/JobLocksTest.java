package dev.syncular.server.storage.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.syncular.server.testsupport.ScratchSchemas;
import dev.syncular.server.testsupport.TestPostgres;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Scheduled jobs on several pods (issue #17): two storages on two connection pools — two pods of one
 * deployment — race for the same job; exactly one runs it, the claim is released with the run, a run within
 * the interval is skipped on every pod, and a pod that dies mid-run releases its claim with its connection.
 */
class JobLocksTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static Vertx vertx;
    private static Pool podA;
    private static Pool podB;
    private static String schema;
    private static PostgresSyncStorage a;
    private static PostgresSyncStorage b;

    @BeforeAll
    static void start() {
        vertx = Vertx.vertx();
        podA = TestPostgres.pool(vertx, 4);
        podB = TestPostgres.pool(vertx, 4);
        schema = "sync_jobs_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        a = new PostgresSyncStorage(podA, schema, PostgresSyncStorage.Settings.DEFAULTS);
        b = new PostgresSyncStorage(podB, schema, PostgresSyncStorage.Settings.DEFAULTS);
        a.ensureSchema(ScratchSchemas.ONE_TABLE).await().atMost(WAIT);
    }

    @AfterAll
    static void stop() {
        podA.query("DROP SCHEMA IF EXISTS \"" + schema + "\" CASCADE")
                .execute()
                .await()
                .atMost(WAIT);
        podA.close().await().atMost(WAIT);
        podB.close().await().atMost(WAIT);
        vertx.close().await().atMost(WAIT);
    }

    @Test
    void twoPodsRacingForAJobRunItOnce() throws Exception {
        String job = "race-" + UUID.randomUUID();
        AtomicInteger runs = new AtomicInteger();
        CompletableFuture<Long> release = new CompletableFuture<>();
        CompletableFuture<Void> running = new CompletableFuture<>();
        CompletableFuture<Long> first = a.runExclusively(job, 0, 1_000L, "pod-a", () -> {
                    runs.incrementAndGet();
                    running.complete(null);
                    return Uni.createFrom().completionStage(release);
                })
                .subscribeAsCompletionStage();
        running.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        Long second = b.runExclusively(job, 0, 1_000L, "pod-b", () -> {
                    runs.incrementAndGet();
                    return Uni.createFrom().item(2L);
                })
                .await()
                .atMost(WAIT);
        assertNull(second, "pod b skipped: pod a holds the job");
        assertFalse(first.isDone());
        release.complete(1L);
        assertEquals(1L, first.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        assertEquals(1, runs.get());
        Row r = podA.query("SELECT ran_by, last_started_at_ms FROM \"" + schema + "\".sync_jobs WHERE name = '" + job
                        + "'")
                .execute()
                .await()
                .atMost(WAIT)
                .iterator()
                .next();
        assertEquals("pod-a", r.getString(0));
        assertEquals(1_000L, r.getLong(1));
    }

    @Test
    void aRunWithinTheIntervalIsSkippedOnEveryPod() {
        String job = "interval-" + UUID.randomUUID();
        assertEquals(
                1L,
                a.runExclusively(
                                job,
                                60_000L,
                                100_000L,
                                "pod-a",
                                () -> Uni.createFrom().item(1L))
                        .await()
                        .atMost(WAIT));
        assertNull(
                b.runExclusively(
                                job,
                                60_000L,
                                130_000L,
                                "pod-b",
                                () -> Uni.createFrom().item(2L))
                        .await()
                        .atMost(WAIT),
                "30 s later, within the 60 s interval: skipped on the other pod too");
        assertEquals(
                3L,
                b.runExclusively(
                                job,
                                60_000L,
                                160_000L,
                                "pod-b",
                                () -> Uni.createFrom().item(3L))
                        .await()
                        .atMost(WAIT));
        assertEquals(
                "boom",
                assertThrows(
                                IllegalStateException.class,
                                () -> a.runExclusively(
                                                job,
                                                60_000L,
                                                230_000L,
                                                "pod-a",
                                                () -> Uni.createFrom().<Long>failure(new IllegalStateException("boom")))
                                        .await()
                                        .atMost(WAIT))
                        .getMessage(),
                "a failed run is passed on");
        assertNull(
                b.runExclusively(
                                job,
                                60_000L,
                                240_000L,
                                "pod-b",
                                () -> Uni.createFrom().item(5L))
                        .await()
                        .atMost(WAIT),
                "and counts as a run: the other pod does not retry it at once");
    }

    /** The claim lives in the holder's transaction: a pod whose connections are gone (crashed) frees the job. */
    @Test
    void aDeadPodReleasesItsClaim() throws Exception {
        String job = "dead-" + UUID.randomUUID();
        Pool doomed = TestPostgres.pool(vertx, 2);
        PostgresSyncStorage c = new PostgresSyncStorage(doomed, schema, PostgresSyncStorage.Settings.DEFAULTS);
        CompletableFuture<Void> running = new CompletableFuture<>();
        c.runExclusively(job, 0, 1L, "pod-c", () -> {
                    running.complete(null);
                    return Uni.createFrom().<Long>nothing();
                })
                .subscribeAsCompletionStage();
        running.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertNull(b.runExclusively(job, 0, 2L, "pod-b", () -> Uni.createFrom().item(1L))
                .await()
                .atMost(WAIT));
        doomed.close().await().atMost(WAIT);
        long deadline = System.nanoTime() + WAIT.toNanos();
        Long ran = null;
        while (ran == null && System.nanoTime() < deadline) {
            ran = b.runExclusively(job, 0, 3L, "pod-b", () -> Uni.createFrom().item(5L))
                    .await()
                    .atMost(WAIT);
        }
        assertEquals(5L, ran);
    }
}
