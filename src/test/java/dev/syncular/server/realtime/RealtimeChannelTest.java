package dev.syncular.server.realtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.syncular.server.cli.HttpFailure;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.segments.memory.InMemorySegmentStore;
import dev.syncular.server.storage.ActivationResult;
import dev.syncular.server.storage.ChangeToWrite;
import dev.syncular.server.storage.CheckpointDeclaration;
import dev.syncular.server.storage.ClientRecord;
import dev.syncular.server.storage.StoredCommit;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import dev.syncular.server.sync.EngineParts;
import dev.syncular.server.sync.ScopeResolver;
import dev.syncular.server.sync.SyncEngine;
import dev.syncular.server.sync.SyncRequestContext;
import dev.syncular.server.testsupport.EngineTransport;
import dev.syncular.server.testsupport.HeldTransaction;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.PrometheusScrape;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestPostgres;
import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.ErrorFrame;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.FrameType;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.MessageDecoder;
import dev.syncular.server.wire.PushResult;
import dev.syncular.server.wire.RespHeader;
import dev.syncular.server.wire.SubEnd;
import dev.syncular.server.wire.SubStart;
import dev.syncular.server.wire.realtime.ControlMessage;
import dev.syncular.server.wire.realtime.ControlMessages;
import io.opentelemetry.context.Context;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** §8.1–§8.3 end to end over real WebSockets against the running app, including a second "pod". */
@QuarkusTest
class RealtimeChannelTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @TestHTTPResource("/")
    URI base;

    @Inject
    SchemaWindow window;

    @Inject
    PostgresSyncStorage storage;

    @Inject
    Pool pool;

    @Inject
    ScopeResolver resolver;

    @Inject
    PodRealtime realtime;

    String partition;

    @BeforeEach
    void partition() {
        partition = "rt-" + UUID.randomUUID();
    }

    RealtimeSocket connect(String actor, String clientId) {
        return RealtimeSocket.connect(base.toString(), partition, actor, clientId);
    }

    SyncTestClient client(String actor, String clientId) {
        SyncTestClient c =
                new SyncTestClient(window.current(), new HttpTransport(base.toString(), partition), actor, clientId);
        c.subscribe("s1", "todos", Map.of("list_id", List.of("l1")));
        return c;
    }

    static Map<String, Object> todo(String id) {
        return Map.of(
                "id", id, "list_id", "l1", "title", "t " + id, "done", false, "position", 1L, "updated_at_ms", 1L);
    }

    ClientRecord record(String clientId) {
        return storage.readClient(partition, clientId).await().atMost(WAIT);
    }

    /**
     * Waits until the stored client record carries {@code cursor} (the §8.2 ack has been applied): each poll waits
     * on the answer of one storage read, until the deadline.
     */
    void awaitStoredCursor(String clientId, long cursor) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (record(clientId).cursor() != cursor) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("ack not stored: cursor " + cursor);
            }
        }
    }

    /** Pulls B until idle, connects it and makes the session deliver deltas (§8.2 post-pull ack point). */
    RealtimeSocket syncAndConnect(SyncTestClient b) throws InterruptedException {
        b.syncUntilIdle();
        RealtimeSocket s = connect(b.actorId, b.clientId);
        JsonNode hello = s.nextEvent("hello").get("data");
        if (hello.get("requiresSync").asBoolean()) {
            long cursor = b.subscriptions.get("s1").cursor;
            s.ack(cursor);
            awaitStoredCursor(b.clientId, cursor);
        }
        return s;
    }

    /** Acks {@code cursor} (waiting until stored), then A's next commit of {@code rowId} must be B's next delta. */
    void ackThenDelta(RealtimeSocket s, SyncTestClient a, SyncTestClient b, long cursor, String rowId)
            throws Exception {
        s.ack(cursor);
        awaitStoredCursor(b.clientId, cursor);
        b.subscriptions.get("s1").cursor = cursor;
        a.upsert("todos", todo(rowId), null);
        a.sync();
        assertDelta(s.nextDelta(), b, rowId);
    }

    void assertDelta(Message delta, SyncTestClient b, String rowId) {
        List<Frame> f = delta.frames();
        long before = b.subscriptions.get("s1").cursor;
        SubStart start = assertInstanceOf(SubStart.class, f.get(1));
        assertEquals("s1", start.id());
        CommitFrame commit = assertInstanceOf(CommitFrame.class, f.get(2));
        assertEquals(before + 1, commit.commitSeq(), "cursor-contiguous");
        assertEquals(rowId, commit.changes().get(0).rowId());
        assertEquals(
                commit.commitSeq(), assertInstanceOf(SubEnd.class, f.get(3)).nextCursor());
    }

    /**
     * §8.2 with this pod's own commits: the fan-out takes a commit it made from its recent commits (no log read), and
     * the deltas are the same, cursor-contiguous, as from the log; with the cache cold (a commit written by another
     * storage over the same schema, as another pod would) the delta is read from the log.
     */
    @Test
    void aDeltaOfThisPodsOwnCommitIsTakenFromItsRecentCommits() throws Exception {
        SyncTestClient a = client("alice", "c-a-" + UUID.randomUUID());
        SyncTestClient b = client("bob", "c-b-" + UUID.randomUUID());
        a.upsert("todos", todo("h0"), null);
        a.syncUntilIdle();
        RealtimeSocket s = syncAndConnect(b);
        // each of this pod's commits: held, or pending until its COMMIT's answer when the NOTIFY came first
        for (int i = 1; i <= 5; i++) {
            long hits = storage.recentCommits().commitHits();
            long misses = storage.recentCommits().commitMisses();
            b.syncUntilIdle();
            ackThenDelta(s, a, b, b.subscriptions.get("s1").cursor, "h" + i);
            assertEquals(hits + 1, storage.recentCommits().commitHits(), "delta " + i + " came from memory");
            assertEquals(misses, storage.recentCommits().commitMisses());
        }

        // another pod's commit: this pod never held it, so the fan-out reads the log
        PostgresSyncStorage otherPod =
                new PostgresSyncStorage(pool, storage.pgSchema(), PostgresSyncStorage.Settings.DEFAULTS);
        otherPod.ensureSchema(window.current()).await().atMost(WAIT);
        b.syncUntilIdle();
        long cursor = b.subscriptions.get("s1").cursor;
        s.ack(cursor);
        awaitStoredCursor(b.clientId, cursor);
        long misses = storage.recentCommits().commitMisses();
        otherPod.inPartitionTransaction(
                        partition,
                        tx -> tx.appendCommit(
                                "alice",
                                a.clientId,
                                UUID.randomUUID().toString(),
                                2L,
                                List.of(ChangeToWrite.upsert("todos", "x1", 1, Map.of("list_id", "l1"), new Object[] {
                                    "x1", "l1", "t x1", false, 1L, 1L
                                })),
                                StoredCommit.UNTRACED))
                .await()
                .atMost(WAIT);
        Message delta = s.nextDelta();
        CommitFrame commit = assertInstanceOf(CommitFrame.class, delta.frames().get(2));
        assertEquals(cursor + 1, commit.commitSeq(), "cursor-contiguous");
        assertEquals("x1", commit.changes().get(0).rowId());
        assertTrue(storage.recentCommits().commitMisses() > misses, "read from the log");
        s.ws.abort();
    }

    @Test
    void bytesPastEndCloseTheConnection() throws Exception {
        SyncTestClient c = client("carol", "c-p-" + UUID.randomUUID());
        RealtimeSocket s = connect("carol", c.clientId);
        s.nextEvent("hello");
        byte[] request = c.buildRequest().encode();
        byte[] pipelined = Arrays.copyOf(request, request.length + 1);
        ByteBuffer b = ByteBuffer.allocate(pipelined.length + 1)
                .put((byte) 0x01)
                .put(pipelined)
                .flip();
        s.ws.sendBinary(b, true).join();
        assertNotNull(s.closed.get(WAIT.toSeconds(), TimeUnit.SECONDS));
    }

    @Test
    void aRequestThatDoesNotDecodeFailsItsRoundInBandAndTheSocketStays() throws Exception {
        SyncTestClient c = client("carol", "c-d-" + UUID.randomUUID());
        RealtimeSocket s = connect("carol", c.clientId);
        s.nextEvent("hello");
        byte[] valid = c.buildRequest().encode();
        // a well-framed request without its REQ_HEADER: the envelope, then END
        byte[] headerless = new byte[FrameType.ENVELOPE_HEADER_BYTES + 5];
        System.arraycopy(valid, 0, headerless, 0, FrameType.ENVELOPE_HEADER_BYTES);
        headerless[FrameType.ENVELOPE_HEADER_BYTES] = (byte) FrameType.END;
        // §8.7: what HTTP answers with a 400 JSON body is RESP_HEADER, ERROR, END on the socket
        HttpFailure http = Assertions.assertThrows(
                HttpFailure.class, () -> new HttpTransport(base.toString(), partition).roundTrip(c, headerless));
        assertEquals(400, http.status);
        List<Frame> frames =
                MessageDecoder.decodeResponse(s.round(headerless, 4)).frames();
        assertEquals(2, frames.size());
        ErrorFrame error = assertInstanceOf(ErrorFrame.class, frames.get(1));
        assertEquals(ControlMessages.readTree(http.body).get("code").asText(), error.code());
        assertEquals("sync.invalid_request", error.code());
        // the connection carries the next round
        assertInstanceOf(
                RespHeader.class,
                MessageDecoder.decodeResponse(s.round(valid, 64)).frames().get(0));
        assertFalse(s.closed.isDone());
        s.ws.abort();
    }

    /**
     * §8.2 with more sessions than one fan-out slice ({@link DeltaDelivery#SLICE} a task, the event loop served
     * between slices): two commits made back to back reach every session as two deltas, in order, cursor-contiguous.
     */
    @Test
    void aFanOutWiderThanOneSliceReachesEverySessionInOrder() throws Exception {
        int n = DeltaDelivery.SLICE + 44;
        SyncTestClient writer = client("wendy", "c-w-" + UUID.randomUUID());
        writer.syncUntilIdle();
        List<SyncTestClient> clients = new ArrayList<>();
        List<RealtimeSocket> sockets = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                SyncTestClient c = client("slice" + i, "c-sl" + i + "-" + UUID.randomUUID());
                clients.add(c);
                sockets.add(syncAndConnect(c));
            }
            writer.upsert("todos", todo("slice-1"), null);
            writer.sync();
            writer.upsert("todos", todo("slice-2"), null);
            writer.sync();
            for (int i = 0; i < n; i++) {
                SyncTestClient c = clients.get(i);
                Message first = sockets.get(i).nextDelta();
                assertDelta(first, c, "slice-1");
                c.subscriptions.get("s1").cursor = assertInstanceOf(
                                CommitFrame.class, first.frames().get(2))
                        .commitSeq();
                assertDelta(sockets.get(i).nextDelta(), c, "slice-2");
            }
        } finally {
            sockets.forEach(s -> s.ws.abort());
        }
    }

    /**
     * Appendix B scenario 17, reconnect storm (§8.4): 20 sessions on one scope churn while the log advances. Each
     * reconnect gets a {@code hello} with the right {@code requiresSync}; behind sessions get wake-ups, never
     * gap deltas; every session ends registered exactly once; after a recovery pull and ack all converge, and
     * the next commit is each one's first delta, cursor-contiguous.
     */
    @Test
    void B17_reconnectStormConverges() throws Exception {
        int n = 20;
        SyncTestClient writer = client("wendy", "c-w-" + UUID.randomUUID());
        writer.syncUntilIdle();
        List<SyncTestClient> clients = new ArrayList<>();
        List<RealtimeSocket> sockets = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            SyncTestClient c = client("user" + i, "c-s" + i + "-" + UUID.randomUUID());
            clients.add(c);
            sockets.add(syncAndConnect(c));
        }
        int row = 0;
        for (int wave = 0; wave < 3; wave++) {
            for (int k = 0; k < 3; k++) {
                writer.upsert("todos", todo("storm-" + row++), null);
                writer.sync();
            }
            long latest = storage.readPartition(partition).await().atMost(WAIT).maxCommitSeq();
            for (int i = 0; i < n; i++) {
                RealtimeSocket old = sockets.get(i);
                if (i % 2 == 0) {
                    old.ws.abort(); // a dropped socket
                } else {
                    old.ws.sendClose(WebSocket.NORMAL_CLOSURE, "bye").join();
                }
                RealtimeSocket fresh = connect(clients.get(i).actorId, clients.get(i).clientId);
                JsonNode hello = fresh.nextEvent("hello").get("data");
                long cursor = record(clients.get(i).clientId).cursor();
                assertEquals(cursor < latest, hello.get("requiresSync").asBoolean(), "requiresSync of session " + i);
                assertEquals(latest, hello.get("latestCursor").asLong());
                sockets.set(i, fresh);
            }
        }
        // behind sessions hear a commit as a catchup-required wake-up, never as a delta past their cursor
        writer.upsert("todos", todo("storm-" + row++), null);
        writer.sync();
        for (RealtimeSocket s : sockets) {
            assertEquals(
                    "catchup-required",
                    s.nextEvent("sync").get("data").get("reason").asText());
        }
        // every session is registered exactly once: the closed ones are gone from the hub
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (realtime.hub().sessionCount(partition) != n) {
            assertTrue(
                    System.nanoTime() < deadline, "sessions: " + realtime.hub().sessionCount(partition));
            // each poll waits on an answer of the server, whose event loops also process the closes
            HTTP.send(
                    HttpRequest.newBuilder(URI.create(base + "q/health/live"))
                            .GET()
                            .build(),
                    HttpResponse.BodyHandlers.discarding());
        }
        // recovery: pull, ack; then everyone holds the writer's rows and the next commit is a contiguous delta
        for (int i = 0; i < n; i++) {
            SyncTestClient c = clients.get(i);
            c.syncUntilIdle();
            assertEquals(writer.table("todos").keySet(), c.table("todos").keySet(), "session " + i + " converged");
            sockets.get(i).ack(c.subscriptions.get("s1").cursor);
            awaitStoredCursor(c.clientId, c.subscriptions.get("s1").cursor);
        }
        writer.upsert("todos", todo("after-storm"), null);
        writer.sync();
        for (int i = 0; i < n; i++) {
            RealtimeSocket s = sockets.get(i);
            assertDelta(s.nextDelta(), clients.get(i), "after-storm");
            s.ws.abort();
        }
    }

    @Test
    void oversizeDeltaWakesDeltaTooLarge() throws Exception {
        SyncTestClient a = client("alice", "c-a-" + UUID.randomUUID());
        SyncTestClient b = client("bob", "c-b-" + UUID.randomUUID());
        a.syncUntilIdle();
        RealtimeSocket s = syncAndConnect(b);
        // test profile: syncular.realtime.max-delta-bytes=8K
        Map<String, Object> big = new HashMap<>(todo("big"));
        big.put("title", "x".repeat(20_000));
        a.upsert("todos", big, null);
        a.sync();
        assertEquals(
                "delta-too-large", s.nextEvent("sync").get("data").get("reason").asText());
        assertTrue(s.binaries.isEmpty());
        s.ws.abort();
    }

    @Test
    void heartbeatsArriveAndMetricsCountTheSocket() throws Exception {
        RealtimeSocket s = connect("dave", "c-h-" + UUID.randomUUID());
        s.nextEvent("hello");
        // test profile: syncular.realtime.heartbeat-interval=1s
        JsonNode beat = s.nextEvent("heartbeat");
        assertInstanceOf(ControlMessage.Heartbeat.class, ControlMessages.parseServerMessage(beat.toString()));
        String metrics = HTTP.send(
                        HttpRequest.newBuilder(URI.create(
                                        "http://localhost:" + PrometheusScrape.managementTestPort() + "/q/metrics"))
                                .GET()
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
        assertTrue(metrics.contains("syncular_realtime_connections"), "open connections gauge");
        assertTrue(
                metrics.contains("syncular_realtime_wakeups_total{reason=\"catchup-required\"}"), "wake-ups by reason");
        assertTrue(metrics.contains("syncular_realtime_delta_latency_seconds_count"), "commit-to-delta latency");
        assertTrue(metrics.contains("syncular_realtime_presence_members"), "presence members");
        assertTrue(metrics.contains("syncular_realtime_listen_reconnects_total"), "LISTEN reconnects");
        assertTrue(metrics.contains("\nsyncular_realtime_fanout_backlog "), "the fan-out's read backlog");
        assertTrue(metrics.contains("\nsyncular_realtime_fanout_overflows_total "), "fan-out overflows");
        assertTrue(
                metrics.contains("syncular_realtime_fanout_recent_total{result=\"hit\"}"),
                "fan-out reads from the pod's recent commits");
        assertTrue(metrics.contains("syncular_pull_recent_windows_total{result=\"miss\"}"), "pull windows by result");
        assertTrue(metrics.contains("\nsyncular_pull_recent_bytes "), "recent commits held");
        // read at each heartbeat; the first one has been sent, so the gauge holds a fraction of the queue
        Matcher usage = Pattern.compile("\nsyncular_postgres_notification_queue_usage ([0-9.E-]+)")
                .matcher(metrics);
        assertTrue(usage.find(), "pg_notification_queue_usage() gauge");
        double fraction = Double.parseDouble(usage.group(1));
        assertTrue(fraction >= 0 && fraction < 1, "a fraction: " + fraction);
        // a silent client answering pings (the JDK client pongs by itself) is not reaped: idle means 3 intervals
        for (int i = 0; i < 4; i++) {
            s.nextEvent("heartbeat");
        }
        assertFalse(s.closed.isDone(), "a live socket must not be reaped");
        s.ws.abort();
    }

    /**
     * §8.5 with §8.7: a socket waiting for its own round is not reaped, even with its pongs unread for longer than
     * three heartbeat intervals (here: a client reading nothing while its push waits for the partition lock, as when
     * the pod's event loop is too busy to read them). Once the lock is released the round answers on the same socket.
     */
    @Test
    void aSocketWaitingForItsRoundIsNotReaped() throws Exception {
        RealtimeSocket beats = connect("dave", "c-beats-" + UUID.randomUUID());
        beats.nextEvent("hello");
        String clientId = "c-wait-" + UUID.randomUUID();
        RealtimeSocket waiting = RealtimeSocket.connectPaused(base.toString(), partition, "alice", clientId);
        // the client syncs over HTTP first (the §2.1 epoch, its bootstrap, the partition's row), then over the socket
        HttpTransport http = new HttpTransport(base.toString(), partition);
        SyncTestClient.Transport socket = new RealtimeExactlyOnceTest.SocketTransport(waiting, http);
        AtomicBoolean overSocket = new AtomicBoolean();
        SyncTestClient a = new SyncTestClient(
                window.current(),
                new SyncTestClient.Transport() {
                    @Override
                    public byte[] roundTrip(SyncTestClient client, byte[] request) {
                        return (overSocket.get() ? socket : http).roundTrip(client, request);
                    }

                    @Override
                    public byte[] downloadSegment(SyncTestClient client, String segmentId, String scopesHeader) {
                        return http.downloadSegment(client, segmentId, scopesHeader);
                    }
                },
                "alice",
                clientId);
        a.subscribe("s1", "todos", Map.of("list_id", List.of("l1")));
        a.upsert("todos", todo("first"), null);
        a.syncUntilIdle();
        overSocket.set(true);
        CompletableFuture<Message> round;
        try (HeldTransaction lock = HeldTransaction.begin(
                pool,
                "SELECT 1 FROM \"" + storage.pgSchema() + "\".sync_partitions WHERE partition_id = '" + partition
                        + "' FOR UPDATE")) {
            a.upsert("todos", todo("second"), null);
            round = CompletableFuture.supplyAsync(a::sync);
            lock.awaitBlocked(); // the round's push waits for the partition
            // five heartbeats (1 s apart in tests): the paused socket has been silent past three intervals
            for (int i = 0; i < 5; i++) {
                beats.nextEvent("heartbeat");
            }
            lock.commit();
        }
        // the paused client reads the pod's answer now: its round's response, or the reaper's close
        waiting.resume();
        Message answered = round.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertTrue(answered.frames().stream().anyMatch(f -> f instanceof PushResult));
        assertFalse(waiting.closed.isDone());
        waiting.ws.abort();
        beats.ws.abort();
    }

    @Test
    void helloCarriesEveryField() throws Exception {
        RealtimeSocket s = connect("alice", "c-hello");
        JsonNode hello = s.nextEvent("hello");
        ControlMessage.Hello h =
                assertInstanceOf(ControlMessage.Hello.class, ControlMessages.parseServerMessage(hello.toString()));
        assertEquals(1, h.protocolVersion());
        assertEquals("alice", h.actorId());
        assertEquals("c-hello", h.clientId());
        assertFalse(h.sessionId().isEmpty());
        assertEquals(-1, h.cursor());
        assertTrue(h.requiresSync(), "a never-pulled client must sync");
        s.ws.abort();
    }

    @Test
    void refusedUpgradeAnswersJsonError() throws Exception {
        HttpResponse<String> r = HTTP.send(
                HttpRequest.newBuilder(URI.create(base + "realtime?clientId=x"))
                        .GET()
                        .header("x-syncular-partition", partition)
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(400, r.statusCode());
        // an upgrade without credentials: 401 with the §10.1 body, no socket
        CompletionException e = Assertions.assertThrows(
                CompletionException.class,
                () -> HTTP.newWebSocketBuilder()
                        .buildAsync(
                                URI.create(base.toString().replace("http", "ws") + "realtime?clientId=x"),
                                new RealtimeSocket())
                        .join());
        assertInstanceOf(WebSocketHandshakeException.class, e.getCause());
        HttpResponse<?> response = ((WebSocketHandshakeException) e.getCause()).getResponse();
        assertEquals(401, response.statusCode());
        assertEquals(
                "sync.auth_required",
                ControlMessages.readTree(String.valueOf(response.body()))
                        .get("code")
                        .asText());
    }

    @Test
    void pushByAReachesBAsContiguousDeltaAndAckAdvancesTheRecord() throws Exception {
        SyncTestClient a = client("alice", "c-a-" + UUID.randomUUID());
        SyncTestClient b = client("bob", "c-b-" + UUID.randomUUID());
        a.syncUntilIdle();
        RealtimeSocket s = syncAndConnect(b);
        String row = a.upsert("todos", todo("r1"), null);
        a.sync();
        Message delta = s.nextDelta();
        assertDelta(delta, b, "todo-unused".equals(row) ? row : "r1");
        long seq = ((SubEnd) delta.frames().get(3)).nextCursor();
        // the ack is stored, and a second commit follows contiguously
        ackThenDelta(s, a, b, seq, "r2");
        s.ws.abort();
    }

    @Test
    void ackWithAStaleEpochChangesNothing() throws Exception {
        SyncTestClient b = client("bob", "c-e-" + UUID.randomUUID());
        b.syncUntilIdle();
        RealtimeSocket s = connect(b.actorId, b.clientId);
        s.nextEvent("hello");
        storage.rotateLogEpoch(partition).await().atMost(WAIT);
        b.syncUntilIdle(); // re-registers under the new epoch
        ClientRecord before = record(b.clientId);
        assertNotNull(before);
        s.ack(1_000);
        // messages of one socket are processed in order, each after the previous one's storage work: once a
        // later socket round has answered, the stale ack has been handled
        s.round(b.buildRequest().encode(), 64);
        assertEquals(before.cursor(), record(b.clientId).cursor());
        s.ws.abort();
    }

    @Test
    void behindAtConnectWakesUntilAckThenDeltasResume() throws Exception {
        SyncTestClient a = client("alice", "c-a-" + UUID.randomUUID());
        SyncTestClient b = client("bob", "c-b-" + UUID.randomUUID());
        a.syncUntilIdle();
        b.syncUntilIdle();
        a.upsert("todos", todo("r0"), null);
        a.sync();
        RealtimeSocket s = connect(b.actorId, b.clientId);
        assertTrue(s.nextEvent("hello").get("data").get("requiresSync").asBoolean());
        a.upsert("todos", todo("r1"), null);
        a.sync();
        JsonNode wake = s.nextEvent("sync").get("data");
        assertEquals("catchup-required", wake.get("reason").asText());
        assertTrue(s.binaries.isEmpty());
        // an ack still behind the observed commits keeps the session suppressed and wakes it again
        s.ack(0);
        assertEquals(
                "catchup-required",
                s.nextEvent("sync").get("data").get("reason").asText());
        b.syncUntilIdle();
        ackThenDelta(s, a, b, b.subscriptions.get("s1").cursor, "r2");
        s.ws.abort();
    }

    @Test
    void commitOfAnotherPodReachesThisPodsSocket() throws Exception {
        SyncTestClient b = client("bob", "c-b-" + UUID.randomUUID());
        RealtimeSocket s = syncAndConnect(b);
        // another pod: its own engine and storage over its own pool, same database and storage schema
        Vertx vertx = Vertx.vertx();
        Pool otherPool = TestPostgres.pool(vertx, 2);
        try {
            PostgresSyncStorage other =
                    new PostgresSyncStorage(otherPool, storage.pgSchema(), PostgresSyncStorage.Settings.DEFAULTS);
            other.ensureSchema(window.current()).await().atMost(WAIT);
            SyncEngine engine = new SyncEngine(EngineParts.builder(window, other, new InMemorySegmentStore(), resolver)
                    .build());
            SyncTestClient a = client("alice", "c-a-" + UUID.randomUUID());
            a.state.logEpoch = b.state.logEpoch;
            a.upsert("todos", todo("pod2"), null);
            engine.handle(
                            new SyncRequestContext("alice", partition),
                            a.buildRequest(),
                            SyncEngine.Binding.HTTP,
                            Context.root())
                    .await()
                    .atMost(WAIT);
            assertDelta(s.nextDelta(), b, "pod2");
        } finally {
            otherPool.close().await().atMost(WAIT);
            vertx.close().await().atMost(WAIT);
        }
        s.ws.abort();
    }

    /**
     * §2.1 restore rotation taken by another pod (its own storage over its own pool): this pod's socket of the
     * partition hears it on the commit channel and gets {@code reset-required} (§8.3); the client's next round
     * answers the reset with the new epoch, and a socket round re-binds the session to it.
     */
    @Test
    void epochRotationOnAnotherPodResetsThisPodsSockets() throws Exception {
        SyncTestClient b = client("bob", "c-b-" + UUID.randomUUID());
        RealtimeSocket s = syncAndConnect(b);
        String before = b.state.logEpoch;
        Vertx vertx = Vertx.vertx();
        Pool otherPool = TestPostgres.pool(vertx, 2);
        String rotated;
        try {
            rotated = new PostgresSyncStorage(otherPool, storage.pgSchema(), PostgresSyncStorage.Settings.DEFAULTS)
                    .rotateLogEpoch(partition)
                    .await()
                    .atMost(WAIT)
                    .logEpoch();
        } finally {
            otherPool.close().await().atMost(WAIT);
            vertx.close().await().atMost(WAIT);
        }
        assertEquals(
                "reset-required", s.nextEvent("sync").get("data").get("reason").asText());
        Message reset = b.sync();
        assertTrue(((RespHeader) reset.frames().get(0)).resetRequired());
        assertEquals(rotated, b.state.logEpoch);
        assertTrue(!before.equals(rotated));
        b.syncUntilIdle();
        s.round(b.buildRequest().encode(), 64); // a socket round re-binds the session to the new epoch
        s.ack(b.subscriptions.get("s1").cursor); // caught up: deliveries resume (§8.2)
        SyncTestClient a = client("alice", "c-a-" + UUID.randomUUID());
        a.syncUntilIdle();
        a.upsert("todos", todo("after"), null);
        a.sync();
        assertDelta(s.nextDelta(), b, "after");
        s.ws.abort();
    }

    /** §2.4 applies to deltas: while this pod's serve gate refuses the partition, a commit is a wake-up. */
    @Test
    void aPendingCheckpointHoldsDeltasBack() throws Exception {
        SyncTestClient b = client("bob", "c-b-" + UUID.randomUUID());
        RealtimeSocket s = syncAndConnect(b);
        int version = window.current().version();
        storage.declareCheckpoint(partition, "fill", version, System.currentTimeMillis())
                .await()
                .atMost(WAIT);
        // the backfilling pod declared the checkpoint, so it serves and writes; this pod does not
        Vertx vertx = Vertx.vertx();
        Pool otherPool = TestPostgres.pool(vertx, 2);
        try {
            PostgresSyncStorage other =
                    new PostgresSyncStorage(otherPool, storage.pgSchema(), PostgresSyncStorage.Settings.DEFAULTS);
            other.ensureSchema(window.current()).await().atMost(WAIT);
            SyncEngine backfiller =
                    new SyncEngine(EngineParts.builder(window, other, new InMemorySegmentStore(), resolver)
                            .checkpoints(List.of(new CheckpointDeclaration(partition, "fill", version)))
                            .build());
            SyncTestClient.Transport viaBackfiller = new EngineTransport(backfiller, partition, Map.of());
            SyncTestClient a = new SyncTestClient(window.current(), viaBackfiller, "alice", "c-a-" + UUID.randomUUID());
            a.state.logEpoch = b.state.logEpoch;
            a.upsert("todos", todo("while-pending"), null);
            a.sync();
            assertTrue(SyncTestClient.applied(a.results.values().iterator().next()), "the declaring pod writes");
            assertEquals(
                    "catchup-required",
                    s.nextEvent("sync").get("data").get("reason").asText());
            // the pull the wake-up asks for is refused by the gate, as over HTTP
            HttpFailure refused = Assertions.assertThrows(HttpFailure.class, b::sync);
            assertEquals(503, refused.status);
            assertTrue(s.binaries.isEmpty(), "no delta left the closed gate");
        } finally {
            // the backfill completes (other tests of this app need the gate, and readiness, open again)
            long epoch = storage.claimCheckpoint(partition, "fill", version, System.currentTimeMillis())
                    .await()
                    .atMost(WAIT)
                    .ownerEpoch();
            long head = storage.readPartition(partition).await().atMost(WAIT).maxCommitSeq();
            assertEquals(
                    ActivationResult.ACTIVATED,
                    storage.activateCheckpoint(
                                    partition, "fill", epoch, head, List.of("todos"), System.currentTimeMillis())
                            .await()
                            .atMost(WAIT));
            otherPool.close().await().atMost(WAIT);
            vertx.close().await().atMost(WAIT);
        }
        b.syncUntilIdle();
        assertTrue(b.table("todos").containsKey("while-pending"), "served once the checkpoint is active");
        s.ws.abort();
    }

    @Test
    void losingTheListenConnectionWakesEverySocket() throws Exception {
        SyncTestClient b = client("bob", "c-b-" + UUID.randomUUID());
        RealtimeSocket s = syncAndConnect(b);
        int killed = pool.preparedQuery("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                        + " WHERE query LIKE 'LISTEN%' AND application_name = $1")
                .execute(Tuple.of(realtime.hub().podId()))
                .await()
                .atMost(WAIT)
                .size();
        assertEquals(1, killed);
        assertEquals(
                "catchup-required",
                s.nextEvent("sync").get("data").get("reason").asText());
        s.ws.abort();
    }
}
