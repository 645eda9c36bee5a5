package dev.syncular.server.realtime;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.console.ConsoleAccess;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.testsupport.AdminRecoveryProfile;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestPostgres;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;
import jakarta.inject.Inject;
import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * The visibility lag through the running app: a delta written to a socket records its commit's lag
 * ({@code syncular_client_visibility_seconds{path="delta"}}); a pull-only client's commits are recorded as it pulls
 * them, their lag the time since the commit (its pull interval); a client that was away is kept apart
 * ({@code syncular_client_visibility_offline_seconds}); a socket that does not read is the stalest of its partition
 * with {@code socket_backpressure}, and a woken client that has not pulled is listed with {@code pull_interval} by the
 * admin API until its ack catches it up. Shares {@link AdminRecoveryProfile}'s app (1 MiB outbound budget, stuck
 * sockets closed after 2 s, the admin token); every test in a partition of its own.
 */
@QuarkusTest
@OwnApp
@TestProfile(AdminRecoveryProfile.class)
class ClientVisibilityTest {
    @TestHTTPResource("/")
    URI base;

    @Inject
    SchemaWindow window;

    @Inject
    PodRealtime realtime;

    @Inject
    MeterRegistry registry;

    final String partition = "lag-" + UUID.randomUUID();

    SyncTestClient reader(String actor) {
        SyncTestClient c =
                SyncTestClient.onListL1(window.current(), new HttpTransport(base.toString(), partition), actor);
        c.syncUntilIdle();
        return c;
    }

    /** A client pushing to list l1 subscribed to list l2: only the readers record the lag of its commits. */
    SyncTestClient writer() {
        SyncTestClient w = new SyncTestClient(
                        window.current(),
                        new HttpTransport(base.toString(), partition),
                        "writer",
                        "w-" + UUID.randomUUID())
                .subscribe("s2", "todos", Map.of("list_id", List.of("l2")));
        w.syncUntilIdle();
        return w;
    }

    long push(SyncTestClient w, String id, String title) {
        String commit = w.upsert(
                "todos",
                Map.of("id", id, "list_id", "l1", "title", title, "done", false, "position", 1L, "updated_at_ms", 1L),
                null);
        w.sync();
        assertTrue(SyncTestClient.applied(w.result(commit)), "push applied: " + w.result(commit));
        return w.result(commit).commitSeq();
    }

    Timer timer(String name, String path) {
        Timer t = path == null
                ? registry.find(name).timer()
                : registry.find(name).tag("path", path).timer();
        assertNotNull(t, name + " " + path);
        return t;
    }

    static void await(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + RealtimeSocket.WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, what);
            Thread.onSpinWait();
        }
    }

    @Test
    void aDeltaWrittenToASocketRecordsItsCommitsLag() throws Exception {
        SyncTestClient r = reader("reader");
        RealtimeSocket socket = RealtimeSocket.connect(base.toString(), partition, r.actorId, r.clientId);
        assertFalse(socket.nextEvent("hello").get("data").get("requiresSync").asBoolean());
        Timer delta = timer("syncular.client.visibility", "delta");
        long count = delta.count();
        double totalMs = delta.totalTime(TimeUnit.MILLISECONDS);
        long before = System.currentTimeMillis();
        push(writer(), "d1", "delta");
        socket.nextDelta();
        // recorded right after the write is issued: the client may read the delta first
        await(() -> delta.count() > count, "the delta's lag is recorded");
        long elapsed = System.currentTimeMillis() - before;
        assertEquals(count + 1, delta.count(), "one delta, one sample");
        double lag = delta.totalTime(TimeUnit.MILLISECONDS) - totalMs;
        assertTrue(lag >= 0 && lag <= elapsed, "the lag " + lag + " ms lies within the push and the delta: " + elapsed);
        socket.ws.abort();
    }

    @Test
    void aPullOnlyClientsLagIsItsPullInterval() {
        SyncTestClient r = reader("puller");
        Timer pull = timer("syncular.client.visibility", "pull");
        Timer offline = timer("syncular.client.visibility.offline", null);
        long count = pull.count();
        long offlineCount = offline.count();
        double totalMs = pull.totalTime(TimeUnit.MILLISECONDS);
        long pushStart = System.currentTimeMillis();
        push(writer(), "p1", "pulled");
        r.sync();
        long pullEnd = System.currentTimeMillis();
        assertEquals(count + 1, pull.count(), "the pull handed over one commit");
        assertEquals(offlineCount, offline.count(), "the client was not away");
        double lag = pull.totalTime(TimeUnit.MILLISECONDS) - totalMs;
        assertTrue(
                lag >= 0 && lag <= pullEnd - pushStart,
                "the lag " + lag + " ms is the time from the commit to the pull: " + (pullEnd - pushStart));
    }

    @Test
    void aClientThatWasAwayIsNotCountedAsStale() throws Exception {
        SyncTestClient r = reader("away");
        // the client's record as if it was last seen an hour ago (past syncular.slo.offline-after)
        try (Connection db = DriverManager.getConnection(
                        "jdbc:" + TestPostgres.url(), TestPostgres.user(), TestPostgres.password());
                PreparedStatement st = db.prepareStatement("UPDATE " + AdminRecoveryProfile.PG_SCHEMA
                        + ".sync_clients SET updated_at_ms = updated_at_ms - 3600000 WHERE client_id = ?")) {
            st.setString(1, r.clientId);
            assertEquals(1, st.executeUpdate());
        }
        Timer pull = timer("syncular.client.visibility", "pull");
        Timer offline = timer("syncular.client.visibility.offline", null);
        long count = pull.count();
        long offlineCount = offline.count();
        push(writer(), "a1", "while away");
        r.sync();
        assertEquals(offlineCount + 1, offline.count(), "the away client's commit is kept apart");
        assertEquals(count, pull.count(), "and not counted against the objective");
    }

    @Test
    void aSocketThatDoesNotReadIsTheStalestWithItsReason() {
        SyncTestClient r = reader("reader");
        RealtimeSocket readerSocket = RealtimeSocket.connect(base.toString(), partition, r.actorId, r.clientId);
        RealtimeExactlyOnceTest.Reader reading = new RealtimeExactlyOnceTest.Reader(readerSocket);
        reading.start();
        SyncTestClient s = reader("stuck");
        RealtimeSocket stuck = RealtimeSocket.connectPaused(base.toString(), partition, s.actorId, s.clientId);
        await(() -> realtime.hub().sessionCount(partition) == 2, "both sockets joined");
        double refusals = realtime.hub().metrics().budgetRefusals();
        SyncTestClient w = writer();
        String big = "x".repeat(RealtimeBackpressureTest.ROW_BYTES);
        for (int i = 0; realtime.hub().metrics().budgetRefusals() == refusals; i++) {
            assertTrue(i < RealtimeBackpressureTest.MAX_COMMITS, "the stuck socket was never refused a delta");
            push(w, "big" + i, big);
        }
        // read before the stuck socket is closed (2 s): the pod's stalest, this partition's first
        Stalest now = realtime.hub().stalest(1000, 1000, System.currentTimeMillis());
        List<Stalest.StaleClient> mine = now.clients().stream()
                .filter(c -> c.partition().equals(partition))
                .toList();
        assertFalse(mine.isEmpty(), "the stuck client is listed: " + now);
        assertEquals(s.clientId, mine.get(0).clientId(), "the stuck client is the stalest: " + mine);
        assertEquals(Staleness.SOCKET_BACKPRESSURE, mine.get(0).reason());
        // the reader has every delta; at most the partition's last fan-out may still be on its way
        assertTrue(
                mine.stream().noneMatch(c -> c.clientId().equals(r.clientId) && c.reason() != Staleness.FANOUT_BACKLOG),
                "the reader is not held by its socket: " + mine);
        Stalest.StalePartition p = now.partitions().stream()
                .filter(x -> x.partition().equals(partition))
                .findFirst()
                .orElseThrow();
        assertEquals(Staleness.SOCKET_BACKPRESSURE, p.reason());
        reading.stop.set(true);
        readerSocket.ws.abort();
        stuck.ws.abort();
    }

    @Test
    void aWokenClientIsListedByTheAdminApiUntilItCatchesUp() throws Exception {
        SyncTestClient r = reader("woken");
        SyncTestClient w = writer();
        push(w, "b1", "before the socket");
        // behind at connect: its socket is suppressed, so the next commit goes to it as a wake-up
        RealtimeSocket socket = RealtimeSocket.connect(base.toString(), partition, r.actorId, r.clientId);
        assertTrue(socket.nextEvent("hello").get("data").get("requiresSync").asBoolean());
        long seq = push(w, "b2", "woken for it");
        socket.nextEvent("sync");
        JsonPath listed = given().header("Authorization", "Bearer " + AdminRecoveryProfile.ADMIN_TOKEN)
                .get(base.resolve("admin/stalest"))
                .then()
                .statusCode(200)
                .extract()
                .jsonPath();
        Map<String, Object> client = listed.getMap("clients.find { it.clientId == '" + r.clientId + "' }");
        assertNotNull(client, "the woken client is listed: " + listed.prettify());
        assertEquals(partition, client.get("partition"));
        assertEquals("pull_interval", client.get("reason"));
        assertTrue(((Number) client.get("lagMs")).longValue() >= 0);
        assertNotNull(listed.getMap("partitions.find { it.partition == '" + partition + "' }"));
        assertTrue(listed.getMap("overObjective").containsKey("socket_backpressure"));
        // the console's page shows it with the same reason
        String session = given().redirects()
                .follow(false)
                .contentType("application/x-www-form-urlencoded")
                .body("token=" + AdminRecoveryProfile.ADMIN_TOKEN)
                .post(base.resolve("console/sign-in"))
                .getCookie(ConsoleAccess.COOKIE);
        String page = given().cookie(ConsoleAccess.COOKIE, session)
                .get(base.resolve("console/stalest"))
                .then()
                .statusCode(200)
                .extract()
                .asString();
        assertTrue(
                page.contains("data-client=\"" + r.clientId + "\" data-reason=\"pull_interval\""),
                "the console lists the woken client: " + page);
        // it pulls and acks: nothing is owed any more
        r.sync();
        socket.ack(seq);
        await(
                () -> realtime.hub().stalest(1000, 1000, System.currentTimeMillis()).clients().stream()
                        .noneMatch(c -> c.clientId().equals(r.clientId)),
                "the client that caught up is not listed");
        socket.ws.abort();
    }
}
