package dev.syncular.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.cli.Subscription;
import dev.syncular.server.sync.SyncScenariosContract;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.Notes;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.PrometheusScrape;
import dev.syncular.server.testsupport.TestPostgres;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.pgclient.PgConnectOptions;
import jakarta.inject.Inject;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Reads from replicas for real (docs/SCALING.md, "Reads from replicas"): the app reads pull-only rounds from a
 * streaming hot standby of its database ({@code .ci/standby.sh}, {@link TestPostgres#replicaUrl()}) and from a
 * replica URL nothing listens on. Real HTTP rounds; the standby's replay is paused and resumed with
 * {@code pg_wal_replay_pause()} / {@code pg_wal_replay_resume()}; every wait polls a condition with a deadline.
 */
@QuarkusTest
@OwnApp
@TestProfile(ReplicaReadsTest.Replicas.class)
class ReplicaReadsTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String READS = "syncular.replica.reads";

    /**
     * The notes schema in its own storage schema, a live standby, a dead replica and the primary itself misconfigured
     * as a replica (not a standby: never in rotation), a 3 s lag limit.
     */
    public static class Replicas implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "syncular.schema.path",
                    Path.of("src/test/resources/schema/notes.json")
                            .toAbsolutePath()
                            .toString(),
                    "syncular.storage.pg-schema",
                    "sync_replica_"
                            + UUID.randomUUID().toString().replace("-", "").substring(0, 10),
                    "syncular.storage.replicas",
                    TestPostgres.replicaUrl() + "," + dead() + "," + TestPostgres.url(),
                    "syncular.storage.replica-max-lag",
                    "3s",
                    "syncular.storage.replica-check-interval",
                    "200ms",
                    "syncular.fairness.max-rounds-per-actor",
                    "0",
                    "syncular.fairness.max-push-operations-per-actor",
                    "0");
        }
    }

    /** A replica URL nothing listens on (port 1 of the loopback). */
    static String dead() {
        return "postgresql://127.0.0.1:1/"
                + PgConnectOptions.fromUri(TestPostgres.url()).getDatabase();
    }

    static String standbyName() {
        PgConnectOptions o = PgConnectOptions.fromUri(TestPostgres.replicaUrl());
        return o.getHost() + ":" + o.getPort() + "/" + o.getDatabase();
    }

    static final String DEAD =
            "127.0.0.1:1/" + PgConnectOptions.fromUri(TestPostgres.url()).getDatabase();

    /** The primary's name, configured as a replica. */
    static String primaryName() {
        PgConnectOptions o = PgConnectOptions.fromUri(TestPostgres.url());
        return o.getHost() + ":" + o.getPort() + "/" + o.getDatabase();
    }

    /** Rounds no replica could take (counted on the replica whose turn it was). */
    private double unavailable() {
        return reads(standbyName(), "unavailable") + reads(DEAD, "unavailable") + reads(primaryName(), "unavailable");
    }

    private static Vertx vertx;
    private static Pool standby;

    @Inject
    MeterRegistry registry;

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    @BeforeAll
    static void standbyPool() {
        vertx = Vertx.vertx();
        standby = TestPostgres.replicaPool(vertx, 1);
    }

    @AfterAll
    static void closeStandby() {
        resume();
        standby.close().await().atMost(WAIT);
        vertx.close().await().atMost(WAIT);
    }

    /** Replay runs again after every test, whatever it did. */
    @AfterEach
    void resumeReplay() {
        resume();
    }

    private static void pause() {
        TestPostgres.pauseReplay(standby);
    }

    private static void resume() {
        TestPostgres.resumeReplay(standby);
    }

    private dev.syncular.server.testsupport.SyncTestClient client(String partition, String actor) {
        return new dev.syncular.server.testsupport.SyncTestClient(
                        SyncScenariosContract.SCHEMA,
                        new HttpTransport("http://localhost:" + port, partition),
                        actor,
                        actor + "-" + UUID.randomUUID())
                .subscribe("notes", "notes", Map.of("project_id", List.of("p1")));
    }

    private double reads(String replica, String outcome) {
        Counter c = registry.find(READS)
                .tag("replica", replica)
                .tag("outcome", outcome)
                .counter();
        return c == null ? 0 : c.count();
    }

    private double allReads() {
        return registry.find(READS).counters().stream()
                .mapToDouble(Counter::count)
                .sum();
    }

    private double gauge(String name, String replica) {
        Gauge g = registry.find(name).tag("replica", replica).gauge();
        return g == null ? Double.NaN : g.value();
    }

    private boolean inRotation(String replica) {
        return gauge("syncular.replica.in.rotation", replica) == 1.0;
    }

    /** Runs {@code step} until {@code done} holds, at most {@link #WAIT}. */
    private static void until(String what, BooleanSupplier done, Runnable step) {
        long end = System.nanoTime() + WAIT.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("not within " + WAIT + ": " + what);
            }
            step.run();
        }
    }

    /**
     * Pull-only rounds until {@code c} holds {@code notes} notes, its cursor never moving back. A replica may answer
     * a round before this pod heard the last commits announced (the client holds nothing newer, so the freshness
     * rule allows it): the client has them one round later, as a realtime client does when it is woken.
     */
    private static void converges(dev.syncular.server.testsupport.SyncTestClient c, int notes) {
        long[] last = {cursor(c)};
        until("the client holds " + notes + " notes", () -> c.table("notes").size() == notes, () -> {
            c.sync();
            assertTrue(cursor(c) >= last[0], "the cursor went back");
            last[0] = cursor(c);
        });
        assertEquals(notes, c.table("notes").size());
    }

    private static long cursor(dev.syncular.server.testsupport.SyncTestClient c) {
        Subscription s = c.subscriptions.get("notes");
        return s.cursor;
    }

    @Test
    void pullOnlyRoundsAreServedByTheStandby() {
        String partition = "replica-" + UUID.randomUUID();
        var writer = client(partition, "alice");
        for (int i = 0; i < 5; i++) {
            writer.upsert("notes", Notes.note("n" + i, (long) i), null);
        }
        writer.syncUntilIdle();
        until("the standby is in rotation", () -> inRotation(standbyName()), () -> writer.sync());
        double served = reads(standbyName(), "served");
        // a fresh reader bootstraps, then pulls incrementally: once the standby replayed the commits (the pod heard
        // them announced, so nothing older is served) its rounds are served there
        var reader = client(partition, "bob");
        until("a round served by the standby", () -> reads(standbyName(), "served") > served, () -> {
            reader.syncUntilIdle();
        });
        converges(reader, 5);
        assertEquals(cursor(writer), cursor(reader), "and the writer's cursor");
        PrometheusScrape scrape = PrometheusScrape.scrape();
        assertTrue(
                scrape.value("syncular_replica_reads_total", Map.of("replica", standbyName(), "outcome", "served")) > 0,
                "exported: " + scrape.values("syncular_replica_reads_total"));
        assertTrue(scrape.exports("syncular_replica_lag_seconds"));
        assertTrue(scrape.exports("syncular_replica_in_rotation"));
        assertTrue(
                scrape.values("syncular_replica_reads_total").keySet().stream()
                        .noneMatch(k -> k.contains("password") || k.contains("postgresql://")),
                "tags name host:port/db only");
    }

    /**
     * Bootstraps on the standby: rows pages (§5.2) and a SQLite image built from its pages (§5.3, a segment build),
     * each fresh client's first round counted {@code served} once the standby replayed what the pod heard announced.
     */
    @Test
    void bootstrapsAndImageBuildsAreServedByTheStandby() {
        String partition = "replica-" + UUID.randomUUID();
        var writer = client(partition, "alice");
        for (int i = 0; i < 40; i++) {
            writer.upsert("notes", Notes.note("n" + i, (long) i), null);
        }
        writer.syncUntilIdle();
        until("the standby is in rotation", () -> inRotation(standbyName()), () -> writer.sync());
        for (int lane = 0; lane < 2; lane++) {
            boolean image = lane == 1;
            double served = reads(standbyName(), "served");
            dev.syncular.server.testsupport.SyncTestClient[] reader = {null};
            until(
                    (image ? "an image" : "a rows") + " bootstrap served by the standby",
                    () -> reads(standbyName(), "served") > served,
                    () -> {
                        reader[0] = client(partition, "bob");
                        reader[0].limitSnapshotRows = 10;
                        if (image) {
                            reader[0].accept |= dev.syncular.server.wire.PullHeader.ACCEPT_SQLITE;
                        }
                        reader[0].sync(); // the fresh client learns the log epoch (§2.1)
                        reader[0].sync(); // its first pull: the bootstrap
                    });
            converges(reader[0], 40);
            assertEquals(cursor(writer), cursor(reader[0]));
            if (image) {
                assertTrue(
                        reader[0].segmentRefs.stream()
                                .anyMatch(r -> r.mediaType() == dev.syncular.server.wire.MediaType.SQLITE),
                        "an image was delivered");
            }
        }
    }

    @Test
    void withReplayPausedNoPullIsOlderThanTheCursor() {
        String partition = "replica-" + UUID.randomUUID();
        var writer = client(partition, "alice");
        var reader = client(partition, "bob");
        writer.upsert("notes", Notes.note("first", 0L), null);
        writer.syncUntilIdle();
        reader.syncUntilIdle();
        until("the standby is in rotation", () -> inRotation(standbyName()), () -> reader.sync());
        double behind = reads(standbyName(), "behind") + unavailable();
        int iterations = 100;
        for (int i = 0; i < iterations; i++) {
            pause();
            writer.upsert("notes", Notes.note("n" + i, (long) i), null);
            writer.sync(); // a push round: on the primary, its pull too
            long pushedThrough = cursor(writer);
            assertEquals(i + 2, writer.table("notes").size(), "the push round's own pull");
            double before = reads(standbyName(), "behind") + unavailable();
            writer.sync(); // pull-only, its cursor past what the paused standby replayed
            assertTrue(cursor(writer) >= pushedThrough, "iteration " + i + ": the cursor went back");
            assertEquals(i + 2, writer.table("notes").size(), "iteration " + i + ": rows lost");
            assertTrue(
                    reads(standbyName(), "behind") + unavailable() > before,
                    "iteration " + i + ": a paused standby was not passed over");
            long readerBefore = cursor(reader);
            reader.sync(); // whatever serves it, never older than its own cursor
            assertTrue(cursor(reader) >= readerBefore, "iteration " + i + ": the reader's cursor went back");
            resume();
        }
        assertTrue(reads(standbyName(), "behind") > 0, "the freshness rule sent rounds to the primary");
        assertTrue(reads(standbyName(), "behind") + unavailable() - behind >= iterations);
        converges(reader, iterations + 1);
        assertEquals(cursor(writer), cursor(reader));
        // replay resumed: the standby serves again
        double served = reads(standbyName(), "served");
        until("the standby serves again", () -> reads(standbyName(), "served") > served, () -> reader.sync());
    }

    @Test
    void aLaggingStandbyLeavesRotationAndComesBack() {
        String partition = "replica-" + UUID.randomUUID();
        var writer = client(partition, "alice");
        writer.upsert("notes", Notes.note("first", 0L), null);
        writer.syncUntilIdle();
        until("the standby is in rotation", () -> inRotation(standbyName()), () -> writer.sync());
        pause();
        int[] n = {0};
        until("the paused standby leaves rotation", () -> !inRotation(standbyName()), () -> {
            writer.upsert("notes", Notes.note("lag" + n[0]++, 1L), null);
            writer.sync(); // each commit moves the primary's WAL past the paused replay
        });
        double lag = gauge("syncular.replica.lag.seconds", standbyName());
        assertTrue(lag > 3.0, "lag above the limit: " + lag);
        // nothing in rotation: pull-only rounds are answered by the primary, counted unavailable
        double unavailable = unavailable();
        var reader = client(partition, "bob");
        reader.syncUntilIdle();
        assertEquals(n[0] + 1, reader.table("notes").size(), "answered from the primary, complete");
        assertTrue(unavailable() > unavailable, "counted unavailable");
        resume();
        until("the standby is back in rotation", () -> inRotation(standbyName()), () -> reader.sync());
        double served = reads(standbyName(), "served");
        until("and serves", () -> reads(standbyName(), "served") > served, () -> reader.sync());
        converges(reader, n[0] + 1);
    }

    @Test
    void aDeadReplicaAndAPrimaryStayOutOfRotationAndRoundsAreAnswered() {
        String partition = "replica-" + UUID.randomUUID();
        var writer = client(partition, "alice");
        var reader = client(partition, "bob");
        for (int i = 0; i < 20; i++) {
            writer.upsert("notes", Notes.note("n" + i, (long) i), null);
            writer.sync();
            reader.sync();
            assertEquals(0.0, gauge("syncular.replica.in.rotation", DEAD), "the dead replica is out of rotation");
            assertEquals(0.0, gauge("syncular.replica.in.rotation", primaryName()), "a primary is not a standby");
        }
        converges(reader, 20);
        assertEquals(0.0, reads(DEAD, "served"), "nothing served by a replica nothing listens on");
        assertEquals(0.0, reads(primaryName(), "served"), "nor by a server that is not a standby");
    }

    @Test
    void pushesNeverTouchAReplica() {
        String partition = "replica-" + UUID.randomUUID();
        var writer = client(partition, "alice");
        writer.syncUntilIdle();
        double before = allReads();
        for (int i = 0; i < 20; i++) {
            writer.upsert("notes", Notes.note("n" + i, (long) i), null);
            writer.sync(); // push + pull: both on the primary
        }
        assertEquals(before, allReads(), "no push round asked a replica");
        assertEquals(20, writer.table("notes").size());
    }
}
