package dev.syncular.server.realtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.OtlpCollector;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.ServerProcess;
import dev.syncular.server.testsupport.StartsProcesses;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestPostgres;
import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.SubEnd;
import dev.syncular.server.wire.realtime.ControlMessage;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Several pods, no sticky sessions (§8.2 fanout): two packaged servers as two operating-system processes on
 * one PostgreSQL and one storage schema. A commit taken by pod A reaches a socket held by pod B through
 * PostgreSQL's NOTIFY; pod B losing its LISTEN connection wakes its sockets with {@code catchup-required}
 * (§8.3) instead of leaving a silent gap; and pod B's SIGTERM drains its sockets with 1001 (going away). Both
 * pods trace to a real OTLP collector ({@link OtlpCollector}): pod B's fan-out of pod A's commit links to its push.
 */
@StartsProcesses
class TwoPodRealtimeIT {
    private static final Duration WAIT = RealtimeSocket.WAIT;
    private static final String SCHEMA =
            "it_rt_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    private static final String POD_B_HOST =
            "pod-b-" + UUID.randomUUID().toString().substring(0, 8);
    private static final String ADMIN_TOKEN = "it-admin-" + UUID.randomUUID();

    static ServerProcess podA;
    static ServerProcess podB;
    static CompiledSchema schema;
    static Vertx vertx;
    static Pool pool;

    static OtlpCollector traces;

    @BeforeAll
    static void start() throws Exception {
        schema = SchemaLoader.parse(Files.readString(ServerProcess.BUNDLED_SCHEMA));
        traces = new OtlpCollector();
        podA = traced(pod("two-pod-realtime-a"), "a").start();
        podB = traced(pod("two-pod-realtime-b"), "b")
                .env("HOSTNAME", POD_B_HOST)
                .start();
        vertx = Vertx.vertx();
        pool = TestPostgres.pool(vertx, 1);
    }

    /** A pod of the test's deployment; 1 s heartbeats, so a vanished pod's presence expires within 3 s. */
    static ServerProcess.Builder pod(String name) {
        return ServerProcess.builder(name, SCHEMA)
                .env("SYNCULAR_REALTIME_HEARTBEAT_INTERVAL", "1s")
                .env("SYNCULAR_ADMIN_TOKEN", ADMIN_TOKEN);
    }

    /**
     * Tracing on, every span exported to the test's collector within a fraction of a second, and the pod named in
     * the resource ({@code syncular.test.pod}), as README "Traces" turns it on in production.
     */
    static ServerProcess.Builder traced(ServerProcess.Builder pod, String name) {
        return pod.env("QUARKUS_OTEL_SDK_DISABLED", "false")
                .env("QUARKUS_OTEL_EXPORTER_OTLP_ENDPOINT", traces.endpoint())
                .env("QUARKUS_OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
                .env("QUARKUS_OTEL_BSP_SCHEDULE_DELAY", "100ms")
                .env("QUARKUS_OTEL_RESOURCE_ATTRIBUTES", "syncular.test.pod=" + name);
    }

    @AfterAll
    static void stop() throws Exception {
        ServerProcess.closeAll(podA, podB);
        if (traces != null) {
            traces.close();
        }
        if (pool != null) {
            pool.query("DROP SCHEMA IF EXISTS " + SCHEMA + " CASCADE")
                    .execute()
                    .await()
                    .atMost(WAIT);
            pool.close().await().atMost(WAIT);
            vertx.close().await().atMost(WAIT);
        }
    }

    static SyncTestClient client(ServerProcess pod, String partition, String actor) {
        return SyncTestClient.onListL1(schema, new HttpTransport(pod.baseUrl(), partition), actor);
    }

    static Map<String, Object> todo(String id) {
        return Map.of(
                "id", id, "list_id", "l1", "title", "t " + id, "done", false, "position", 1L, "updated_at_ms", 1L);
    }

    /** B synced to the head, connected to pod B, its post-pull ack stored (deltas flow from here, §8.2). */
    static RealtimeSocket connectSynced(SyncTestClient b, String partition) throws Exception {
        b.syncUntilIdle();
        RealtimeSocket s = RealtimeSocket.connect(podB.baseUrl() + "/", partition, b.actorId, b.clientId);
        JsonNode hello = s.nextEvent("hello").get("data");
        if (hello.get("requiresSync").asBoolean()) {
            s.ack(b.subscriptions.get("s1").cursor);
            // the ack is applied before the next message of the socket; a round after it answers once it is
            s.round(b.buildRequest().encode(), 1 << 16);
        }
        return s;
    }

    @Test
    void aCommitTakenByPodAReachesASocketOnPodB() throws Exception {
        String partition = "p-" + UUID.randomUUID();
        SyncTestClient a = client(podA, partition, "alice");
        SyncTestClient b = client(podB, partition, "bob");
        a.syncUntilIdle();
        RealtimeSocket s = connectSynced(b, partition);
        long before = b.subscriptions.get("s1").cursor;
        a.upsert("todos", todo("from-a"), null);
        a.sync();
        Message delta = s.nextDelta();
        CommitFrame commit = assertInstanceOf(CommitFrame.class, delta.frames().get(2));
        assertEquals(before + 1, commit.commitSeq(), "cursor-contiguous across pods");
        assertEquals("from-a", commit.changes().get(0).rowId());
        assertEquals(
                commit.commitSeq(),
                assertInstanceOf(SubEnd.class, delta.frames().get(3)).nextCursor());
        s.ws.abort();

        // one trace from the write to the reader across the pods: pod B's fan-out of the commit links to pod A's
        // push span, whose context pod A stored with the commit (the §8.2 notification carries none)
        String seq = Long.toString(commit.commitSeq());
        OtlpCollector.Collected push = traces.await(
                "sync.push on pod A",
                c -> c.name().equals("sync.push")
                        && "a".equals(c.resource().get("syncular.test.pod"))
                        && partition.equals(c.attributes().get("syncular.partition"))
                        && seq.equals(c.attributes().get("syncular.commit_seq")),
                WAIT);
        OtlpCollector.Collected fanout = traces.await(
                "realtime.fanout on pod B",
                c -> c.name().equals("realtime.fanout")
                        && "b".equals(c.resource().get("syncular.test.pod"))
                        && partition.equals(c.attributes().get("syncular.partition"))
                        && seq.equals(c.attributes().get("syncular.commit_seq")),
                WAIT);
        assertTrue(
                fanout.links().contains(new OtlpCollector.Link(push.traceId(), push.spanId())),
                "pod B's fan-out links to pod A's push: " + fanout + " / " + push);
        OtlpCollector.Collected delivery = traces.await(
                "realtime.delivery under pod B's fan-out",
                c -> c.name().equals("realtime.delivery") && c.parentSpanId().equals(fanout.spanId()),
                WAIT);
        assertEquals("delta", delivery.attributes().get("syncular.realtime.delivery"));
        System.out.println("Trace across two pods:\n  " + push + "\n  " + fanout + "\n  " + delivery);
    }

    @Test
    void podBLosingItsListenConnectionWakesItsSocketsInsteadOfAGap() throws Exception {
        String partition = "p-" + UUID.randomUUID();
        SyncTestClient b = client(podB, partition, "bob");
        RealtimeSocket s = connectSynced(b, partition);
        int killed = pool.preparedQuery("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                        + " WHERE query LIKE 'LISTEN%' AND application_name LIKE $1")
                .execute(Tuple.of("%" + POD_B_HOST + "%"))
                .await()
                .atMost(WAIT)
                .size();
        assertEquals(1, killed, "pod B holds one LISTEN connection");
        assertEquals(
                "catchup-required",
                s.nextEvent("sync").get("data").get("reason").asText());
        // after the re-LISTEN, a commit through pod A is a delta on pod B again, once the client caught up
        SyncTestClient a = client(podA, partition, "alice");
        a.syncUntilIdle();
        a.upsert("todos", todo("after-relisten"), null);
        a.sync();
        // the woken session sends no delta (wake-ups are coalesced, §8.3) until the client caught up and acked
        b.syncUntilIdle();
        s.ack(b.subscriptions.get("s1").cursor);
        s.round(b.buildRequest().encode(), 1 << 16);
        a.upsert("todos", todo("delta-again"), null);
        a.sync();
        assertTrue(b.table("todos").containsKey("after-relisten"), "the catch-up pull carried the missed commit");
        CommitFrame commit =
                assertInstanceOf(CommitFrame.class, s.nextDelta().frames().get(2));
        assertEquals("delta-again", commit.changes().get(0).rowId());
        s.ws.abort();
    }

    /**
     * Appendix B 11 (d) across pods ({@link InterleavingRuns}): A runs socket rounds on pod A while B's pushes reach
     * pod B over HTTP — answered just before A's round, started as A's request leaves, or as its response starts
     * streaming. Pod A hears each commit through PostgreSQL's NOTIFY: never a delta inside A's response stream,
     * never a commit twice, a {@code catchup-required} wake-up for a commit of the round's window, deltas resuming
     * after the covering ack. {@code -Dinterleaving.runs} (default 20), {@code -Dinterleaving.busy}.
     */
    @Test
    void B11d_aCommitOnAnotherPodDuringTheRoundIsAWakeUpNeverADelta() throws Exception {
        String partition = "p-" + UUID.randomUUID();
        InterleavingRuns.Outcomes outcomes = new InterleavingRuns.Outcomes();
        try (AutoCloseable busy = InterleavingRuns.busyCpu()) {
            InterleavingRuns.Client a =
                    InterleavingRuns.prepare(schema, podA.baseUrl(), partition, InterleavingRuns.REPLAYED);
            SyncTestClient b = client(podB, partition, "bob");
            b.syncUntilIdle();
            InterleavingRuns.othersPush(a, b, InterleavingRuns.runs(), outcomes);
            a.socket.ws.abort();
        }
        outcomes.print("B11d another client's push on another pod");
    }

    /** An operator's disconnect taken by pod A closes the actor's socket held by pod B (the control channel). */
    @Test
    void anOperatorDisconnectOnPodAClosesTheActorsSocketOnPodB() throws Exception {
        String partition = "p-" + UUID.randomUUID();
        SyncTestClient b = client(podB, partition, "bob");
        b.syncUntilIdle();
        RealtimeSocket s = RealtimeSocket.connect(podB.baseUrl() + "/", partition, "bob", b.clientId);
        s.nextEvent("hello");
        HttpResponse<String> answer = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create(
                                        podA.baseUrl() + "/admin/partitions/" + partition + "/actors/bob/disconnect"))
                                .header("Authorization", "Bearer " + ADMIN_TOKEN)
                                .POST(HttpRequest.BodyPublishers.noBody())
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertEquals(202, answer.statusCode(), answer.body());
        assertEquals(OperatorDisconnects.CODE, s.closed.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        assertEquals(OperatorDisconnects.REASON, s.closeReason());
    }

    @Test
    void sigtermDrainsSocketsWithGoingAway() throws Exception {
        ServerProcess podC = pod("two-pod-realtime-c").start();
        String partition = "p-" + UUID.randomUUID();
        SyncTestClient c = client(podC, partition, "carol");
        c.syncUntilIdle();
        RealtimeSocket s = RealtimeSocket.connect(podC.baseUrl() + "/", partition, c.actorId, c.clientId);
        s.nextEvent("hello");
        // 143 = 128 + SIGTERM: the JVM's status after its shutdown hooks (Quarkus' shutdown) ran
        assertEquals(143, podC.stop(Duration.ofSeconds(30)), "exit after the graceful shutdown");
        assertEquals(1001, s.closed.get(WAIT.toSeconds(), TimeUnit.SECONDS), "going away (§8.1 close codes)");
        assertTrue(podC.log().contains("stopped in"), "Quarkus' shutdown completed:\n" + podC.log());
    }

    /** A peer on {@code pod}: synced over HTTP (registered on list:l1), connected, past its hello. */
    static RealtimeSocket presencePeer(ServerProcess pod, String partition, String actor) throws Exception {
        SyncTestClient c = client(pod, partition, actor);
        c.syncUntilIdle();
        RealtimeSocket s = RealtimeSocket.connect(pod.baseUrl() + "/", partition, actor, c.clientId);
        s.nextEvent("hello");
        return s;
    }

    static ObjectNode doc(String v) {
        return JsonNodeFactory.instance.objectNode().put("v", v);
    }

    static JsonNode nextPresence(RealtimeSocket s) throws InterruptedException {
        return s.nextEvent("presence").get("data");
    }

    static JsonNode nextPresenceOf(RealtimeSocket s, String actor) throws InterruptedException {
        while (true) {
            JsonNode d = nextPresence(s);
            if (actor.equals(d.path("actorId").asText())) {
                return d;
            }
        }
    }

    @Test
    void presenceReachesScopeMatesOnEveryPodAndLeavesWithAVanishedPod() throws Exception {
        String partition = "p-" + UUID.randomUUID();
        RealtimeSocket a = presencePeer(podA, partition, "alice");
        RealtimeSocket b = presencePeer(podB, partition, "bob");
        a.send(new ControlMessage.PresencePublish("list:l1", doc("a")));
        JsonNode join = nextPresence(b);
        assertEquals("join", join.get("kind").asText());
        assertEquals("alice", join.get("actorId").asText());
        assertEquals("a", join.get("doc").get("v").asText());
        // a pod started later learns the present peers (its hello makes the others re-announce)
        ServerProcess podD = pod("two-pod-realtime-d").start();
        try {
            RealtimeSocket d = presencePeer(podD, partition, "dave");
            JsonNode snapshot = nextPresence(d);
            assertEquals("join", snapshot.get("kind").asText());
            assertEquals("alice", snapshot.get("actorId").asText());
            d.send(new ControlMessage.PresencePublish("list:l1", doc("d")));
            assertEquals("dave", nextPresence(b).get("actorId").asText());
            assertEquals("dave", nextPresence(a).get("actorId").asText());
            // kill -9: no bye; the pod's peers leave once it has been silent for three heartbeats
            podD.kill();
            JsonNode leave = nextPresence(b);
            assertEquals("leave", leave.get("kind").asText());
            assertEquals("dave", leave.get("actorId").asText());
        } finally {
            podD.close();
        }
        // a disconnect on pod B is a leave on pod A (A also heard dave's join and leave: skip them)
        b.send(new ControlMessage.PresencePublish("list:l1", doc("b")));
        assertEquals("join", nextPresenceOf(a, "bob").get("kind").asText());
        b.ws.abort();
        assertEquals("leave", nextPresenceOf(a, "bob").get("kind").asText());
        a.ws.abort();
    }
}
