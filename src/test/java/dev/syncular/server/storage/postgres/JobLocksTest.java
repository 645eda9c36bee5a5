package dev.syncular.server.storage.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.testsupport.ScratchSchemas;
import dev.syncular.server.testsupport.TestPostgres;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.PoolOptions;
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
 * the interval is skipped on every pod, a pod that dies mid-run leaves the job to the others once its lease has
 * expired, and a running job holds no connection idle in a transaction (issue 44, hole 6).
 */
class JobLocksTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static Vertx vertx;
    private static Pool podA;
    private static Pool podB;
    private static String schema;
    private static PostgresSyncStorage a;
    private static PostgresSyncStorage b;
    /** Short enough for the dead pod's lease to expire within the test. */
    private static final PostgresSyncStorage.Settings SHORT_LEASE = new PostgresSyncStorage.Settings(
            1000, Duration.ofSeconds(10), Duration.ofSeconds(30), 2000, 1000, 0, Duration.ofSeconds(2), 16);

    @BeforeAll
    static void start() {
        vertx = Vertx.vertx();
        podA = TestPostgres.pool(vertx, 4);
        podB = TestPostgres.pool(vertx, 4);
        schema = "sync_jobs_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        a = new PostgresSyncStorage(podA, schema, SHORT_LEASE);
        b = new PostgresSyncStorage(podB, schema, SHORT_LEASE);
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
        Row r = jobRow(job, "ran_by, last_started_at_ms");
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

    /**
     * The claim is a lease the holder renews: while a pod that runs the job lives, its lease outlasts the lease
     * length; a pod that died (its connections gone, its renewals with them) frees the job once the lease expired.
     */
    @Test
    void aDeadPodReleasesItsClaim() throws Exception {
        String job = "dead-" + UUID.randomUUID();
        Pool doomed = TestPostgres.pool(vertx, 2);
        PostgresSyncStorage c = new PostgresSyncStorage(doomed, schema, SHORT_LEASE);
        CompletableFuture<Void> running = new CompletableFuture<>();
        CompletableFuture<Long> hung = c.runExclusively(job, 0, 1L, "pod-c", () -> {
                    running.complete(null);
                    return Uni.createFrom().<Long>nothing();
                })
                .subscribeAsCompletionStage();
        running.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertNull(b.runExclusively(job, 0, 2L, "pod-b", () -> Uni.createFrom().item(1L))
                .await()
                .atMost(WAIT));
        // renewed: two whole lease lengths on the database's clock later, pod c still holds it
        long renewedPast = leaseUntil(job) + 2 * SHORT_LEASE.jobLease().toMillis();
        while (dbNowMs() < renewedPast) {
            assertNull(
                    b.runExclusively(job, 0, 2L, "pod-b", () -> Uni.createFrom().item(1L))
                            .await()
                            .atMost(WAIT));
        }
        doomed.close().await().atMost(WAIT);
        hung.cancel(true);
        long deadline = System.nanoTime() + WAIT.toNanos();
        Long ran = null;
        while (ran == null && System.nanoTime() < deadline) {
            ran = b.runExclusively(job, 0, 3L, "pod-b", () -> Uni.createFrom().item(5L))
                    .await()
                    .atMost(WAIT);
        }
        assertEquals(5L, ran);
    }

    /**
     * While a job runs, its claim holds no connection at all: none of the pod's sessions is idle in a transaction,
     * so {@code idle_in_transaction_session_timeout} (here 100 ms on every connection of the pod) cannot cut it.
     * With the claim as a transaction-level advisory lock held for the whole run, the job's own count was 1.
     */
    @Test
    void aRunningJobHoldsNoConnectionIdleInATransaction() {
        String app = "job-locks-" + UUID.randomUUID().toString().substring(0, 8);
        Pool strict = Pool.newInstance(PgBuilder.pool()
                .with(new PoolOptions().setMaxSize(4))
                .connectingTo(PgConnectOptions.fromUri(TestPostgres.url())
                        .setUser(TestPostgres.user())
                        .setPassword(TestPostgres.password())
                        .addProperty("application_name", app)
                        .addProperty("idle_in_transaction_session_timeout", "100"))
                .using(vertx.getDelegate())
                .build());
        Pool observer = TestPostgres.pool(vertx, 1);
        try {
            PostgresSyncStorage d = new PostgresSyncStorage(strict, schema, SHORT_LEASE);
            String job = "idle-" + UUID.randomUUID();
            Long idleInTransaction = d.runExclusively(
                            job,
                            0,
                            1L,
                            "pod-d",
                            () -> observer.preparedQuery(
                                            "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1"
                                                    + " AND state LIKE 'idle in transaction%'")
                                    .execute(Tuple.of(app))
                                    .map(rs -> rs.iterator().next().getLong(0)))
                    .await()
                    .atMost(WAIT);
            assertEquals(0L, idleInTransaction);
            Row r = jobRow(job, "ran_by, last_finished_at_ms IS NOT NULL, lease_owner");
            assertEquals("pod-d", r.getString(0));
            assertTrue(r.getBoolean(1), "the run's end is recorded");
            assertNull(r.getString(2), "and its lease cleared");
        } finally {
            strict.close().await().atMost(WAIT);
            observer.close().await().atMost(WAIT);
        }
    }

    /** {@code columns} of {@code job}'s row in {@code sync_jobs}. */
    private static Row jobRow(String job, String columns) {
        return first("SELECT " + columns + " FROM \"" + schema + "\".sync_jobs WHERE name = '" + job + "'");
    }

    private static long leaseUntil(String job) {
        return jobRow(job, "lease_until_ms").getLong(0);
    }

    private static long dbNowMs() {
        return first("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint")
                .getLong(0);
    }

    private static Row first(String sql) {
        return podA.query(sql).execute().await().atMost(WAIT).iterator().next();
    }
}
