package dev.syncular.server.operations;

import static dev.syncular.server.operations.OperationsResourceTest.num;
import static dev.syncular.server.operations.OperationsResourceTest.obj;
import static dev.syncular.server.operations.OperationsResourceTest.plain;
import static dev.syncular.server.operations.OperationsResourceTest.str;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.storage.SyncStorage;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.RawHttp;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.SyncTestClient;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The REMOTE.md §6 watch socket, {@code <mount>/operations/realtime}, through the running app over real
 * WebSocket on PostgreSQL: the snapshot, a rerun when a {@code POST /sync} push commits to a watched table,
 * none for a commit to another table, a reused {@code watchId}, {@code unwatch} during a run, close, the caps,
 * bad messages answered precisely, the framing of the answers and metrics per operation id. Messages are built
 * and read with Jackson trees, independently of the server's codec.
 *
 * <p>No test waits for time to pass: where a message must not come, a later message that the server would
 * have had to send after it (a run submitted after the one that must not answer) is awaited instead.
 */
@QuarkusTest
@OwnApp
@TestProfile(OperationWatchTest.Profile.class)
class OperationWatchTest {
    static final Path DIR = OperationsResourceTest.DIR;
    private static final ObjectMapper JSON = new ObjectMapper();
    static String prefix;

    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            Map<String, String> m = new HashMap<>();
            m.put("syncular.schema.path", DIR.resolve("watch.syncular.ir.json").toString());
            m.put("syncular.storage.pg-schema", "operations_watch_test");
            m.put(
                    "syncular.operations.queries.path",
                    DIR.resolve("watch.queries.ir.json").toString());
            m.put("syncular.dev-auth.allowed-scopes", "{\"list_id\":[\"l1\",\"l2\"]}");
            m.put("syncular.operations.watch.max-per-connection", "3");
            m.put("syncular.operations.watch.max-per-pod", "5");
            m.put("syncular.operations.watch.max-per-partition", "4");
            m.put("syncular.operations.watch.min-rerun-interval", "1s");
            m.put("syncular.operations.watch.max-connections", "4");
            return m;
        }
    }

    @Inject
    SchemaWindow window;

    @Inject
    QueryWatches watches;

    @Inject
    MeterRegistry registry;

    @Inject
    SyncStorage storage;

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    String partition;
    final List<RealtimeSocket> sockets = new ArrayList<>();

    @BeforeEach
    void seed() throws Exception {
        if (prefix == null) {
            prefix = QueryIrLoader.documentId(Files.readAllBytes(DIR.resolve("watch.queries.ir.json")));
        }
        partition = "watch-" + UUID.randomUUID();
        push("todos", todo("t1", "l1", "milk"), todo("t2", "l2", "eggs"));
    }

    @AfterEach
    void closeSockets() {
        for (RealtimeSocket s : sockets) {
            s.ws.abort();
        }
        sockets.clear();
        await(() -> watches.activeWatches() == 0, "every watch of the closed sockets is removed");
        await(() -> openSockets() == 0, "every socket is closed");
    }

    // ------------------------------------------------------------------------------------------ helpers

    @SafeVarargs
    private void push(String table, Map<String, Object>... rows) {
        SyncTestClient c = new SyncTestClient(
                window.current(),
                new HttpTransport("http://localhost:" + port, partition),
                "writer",
                "writer-" + UUID.randomUUID());
        List<String> ids = new ArrayList<>();
        for (Map<String, Object> r : rows) {
            ids.add(c.upsert(table, r, null));
        }
        c.syncUntilIdle();
        for (String id : ids) {
            assertTrue(SyncTestClient.applied(c.result(id)), "push applied: " + c.result(id));
        }
    }

    private static Map<String, Object> todo(String id, String list, String title) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", id);
        m.put("list_id", list);
        m.put("title", title);
        m.put("done", false);
        m.put("position", 1L);
        m.put("updated_at_ms", 1_700_000_000_000L);
        m.put("attachment", null);
        return m;
    }

    private static Map<String, Object> note(String id, String list, String body) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", id);
        m.put("list_id", list);
        m.put("body", body);
        return m;
    }

    RealtimeSocket socket() {
        return socket("writer", partition);
    }

    RealtimeSocket socket(String actor, String inPartition) {
        RealtimeSocket s = RealtimeSocket.connect(
                URI.create("ws://localhost:" + port + "/operations/realtime"),
                Map.of("x-actor-id", actor, "x-syncular-partition", inPartition));
        sockets.add(s);
        return s;
    }

    static ObjectNode watch(String watchId, String query, String listId) {
        return obj(
                "revision",
                num(1),
                "kind",
                str("watch"),
                "watchId",
                str(watchId),
                "clientId",
                str("watcher"),
                "operationId",
                str(prefix + "/" + query),
                "params",
                obj("listId", str(listId)));
    }

    static ObjectNode unwatch(String watchId) {
        return obj("revision", num(1), "kind", str("unwatch"), "watchId", str(watchId));
    }

    static void send(RealtimeSocket s, JsonNode message) throws Exception {
        sendBinary(s, JSON.writeValueAsBytes(message));
    }

    static void sendBinary(RealtimeSocket s, byte[] bytes) {
        s.ws.sendBinary(ByteBuffer.wrap(bytes), true).join();
    }

    /** The next binary message, decoded to plain Java. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> next(RealtimeSocket s) throws Exception {
        byte[] b = s.binaries.poll(RealtimeSocket.WAIT.toSeconds(), TimeUnit.SECONDS);
        assertNotNull(b, "a binary message within " + RealtimeSocket.WAIT);
        return (Map<String, Object>) plain(JSON.readTree(b));
    }

    static Map<String, Object> snapshot(RealtimeSocket s, String watchId) throws Exception {
        Map<String, Object> m = next(s);
        assertEquals("snapshot", m.get("kind"), m.toString());
        assertEquals(watchId, m.get("watchId"), m.toString());
        assertEquals(1.0, m.get("revision"));
        return m;
    }

    static void watchError(RealtimeSocket s, String watchId, String code, boolean retryable) throws Exception {
        Map<String, Object> m = next(s);
        assertEquals("watch_error", m.get("kind"), m.toString());
        assertEquals(watchId, m.get("watchId"), m.toString());
        assertEquals(code, m.get("code"), m.toString());
        assertEquals(retryable, m.get("retryable"), m.toString());
        assertTrue(m.get("message") instanceof String);
    }

    @SuppressWarnings("unchecked")
    static List<Object> ids(Map<String, Object> snapshot) {
        List<Object> out = new ArrayList<>();
        for (Object row : (List<Object>) snapshot.get("rows")) {
            out.add(((Map<String, Object>) row).get("id"));
        }
        return out;
    }

    static void await(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + RealtimeSocket.WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "timed out waiting: " + what);
            LockSupport.parkNanos(5_000_000); // a poll, not a wait for time
        }
    }

    double openSockets() {
        return registry.get("syncular.operations.watch.connections").gauge().value();
    }

    double answered(String query, String outcome) {
        Timer t = registry.find("syncular.operations")
                .tag("operation", prefix + "/" + query)
                .tag("binding", "watch")
                .tag("outcome", outcome)
                .timer();
        return t == null ? 0 : t.count();
    }

    // ------------------------------------------------------------------------------------------ tests

    @Test
    void snapshotThenRerunOnACommitToTheWatchedTableOnly() throws Exception {
        RealtimeSocket s = socket();
        double before = answered("todosInList", "ok");
        send(s, watch("a", "todosInList", "l1"));
        Map<String, Object> first = snapshot(s, "a");
        assertEquals(prefix + "/todosInList", first.get("operationId"));
        assertEquals(List.of("t1"), ids(first), "list l1 only");
        double seq = (Double) first.get("maxCommitSeq");
        assertTrue(seq >= 1, "the partition's maxCommitSeq: " + seq);

        // a commit to the watched table: a fresh full replacement
        push("todos", todo("t3", "l1", "bread"));
        Map<String, Object> rerun = snapshot(s, "a");
        assertEquals(List.of("t1", "t3"), ids(rerun));
        assertTrue((Double) rerun.get("maxCommitSeq") > seq);

        // a commit to another table reruns the notes watch only: its snapshot comes, then a todos watch
        // registered after it answers — the todos watch "a" would have been rerun by the same notification,
        // submitted before "b"'s run, so its snapshot would have come before "c"'s
        send(s, watch("b", "notesInList", "l1"));
        assertEquals(List.of(), ids(snapshot(s, "b")));
        push("notes", note("n1", "l1", "call"));
        Map<String, Object> notes = snapshot(s, "b");
        assertEquals(List.of("n1"), ids(notes));
        send(s, watch("c", "todosInList", "l1"));
        Map<String, Object> barrier = snapshot(s, "c");
        assertEquals(List.of("t1", "t3"), ids(barrier));
        assertTrue(s.binaries.isEmpty() && s.texts.isEmpty(), "nothing else for a commit to notes");
        await(() -> answered("todosInList", "ok") - before == 3, "a, its rerun and c counted per operation id");
    }

    /**
     * Identical watches of one connection (same client, query and parameters) may share a run, and each still
     * gets every snapshot of its own: after a commit, both identical watches and the one on another list are
     * rerun, each answer reflecting the commit; unwatching one of the pair leaves the other rerun alone. Repeated
     * so a commit lands while the pair's runs wait for a slot and while one runs.
     */
    @Test
    void identicalWatchesOfAConnectionEachGetEverySnapshot() throws Exception {
        RealtimeSocket s = socket();
        send(s, watch("twin-a", "todosInList", "l1"));
        send(s, watch("twin-b", "todosInList", "l1"));
        send(s, watch("other", "todosInList", "l2"));
        Map<String, List<Object>> latest = new HashMap<>();
        java.util.function.Consumer<Integer> drain = n -> {
            for (int i = 0; i < n; i++) {
                try {
                    Map<String, Object> m = next(s);
                    assertEquals("snapshot", m.get("kind"), m.toString());
                    latest.put((String) m.get("watchId"), ids(m));
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            }
        };
        drain.accept(3);
        assertEquals(latest.get("twin-a"), latest.get("twin-b"));
        // six commits, each past the 1 s rerun interval: a rerun per commit, each delivered to both twins
        for (int round = 0; round < 6; round++) {
            String id = "twin-" + round;
            push("todos", todo(id, "l1", "twin " + round));
            long deadline = System.nanoTime() + RealtimeSocket.WAIT.toNanos();
            while (!(latest.getOrDefault("twin-a", List.of()).contains(id)
                    && latest.getOrDefault("twin-b", List.of()).contains(id))) {
                assertTrue(System.nanoTime() < deadline, "both identical watches see " + id + ": " + latest);
                drain.accept(1);
            }
        }
        send(s, unwatch("twin-a"));
        push("todos", todo("after-unwatch", "l1", "alone"));
        long deadline = System.nanoTime() + RealtimeSocket.WAIT.toNanos();
        while (!latest.getOrDefault("twin-b", List.of()).contains("after-unwatch")) {
            assertTrue(System.nanoTime() < deadline, "the remaining twin sees the commit: " + latest);
            Map<String, Object> m = next(s);
            if ("snapshot".equals(m.get("kind"))) {
                assertTrue(
                        !"twin-a".equals(m.get("watchId")) || !ids(m).contains("after-unwatch"),
                        "no snapshot for the unwatched twin after the unwatch took effect");
                latest.put((String) m.get("watchId"), ids(m));
            }
        }
    }

    /**
     * §2.1 restore rotation: the partition's log epoch changes, so every watch of the partition gets a fresh
     * snapshot (announced on the commit channel like on the sync socket), and watches of other partitions none.
     */
    @Test
    void anEpochRotationRerunsThePartitionsWatches() throws Exception {
        RealtimeSocket s = socket();
        send(s, watch("r", "todosInList", "l1"));
        assertEquals(List.of("t1"), ids(snapshot(s, "r")));
        String other = "watch-other-" + UUID.randomUUID();
        RealtimeSocket elsewhere = socket("writer", other);
        send(elsewhere, watch("o", "todosInList", "l1"));
        assertEquals(List.of(), ids(snapshot(elsewhere, "o")));

        storage.rotateLogEpoch(partition).await().atMost(RealtimeSocket.WAIT);
        assertEquals(List.of("t1"), ids(snapshot(s, "r")), "a fresh snapshot after the rotation");
        // a watch registered afterwards answers first on the other partition's socket: no rerun came before it
        send(elsewhere, watch("o2", "todosInList", "l2"));
        assertEquals(List.of(), ids(snapshot(elsewhere, "o2")));
        assertTrue(elsewhere.binaries.isEmpty(), "no rerun for another partition's rotation");
    }

    @Test
    void aBurstOfCommitsCoalescesIntoOneRerunAtTheEndOfTheInterval() throws Exception {
        RealtimeSocket s = socket();
        double before = answered("todosInList", "ok");
        send(s, watch("a", "todosInList", "l1"));
        double seq = (Double) snapshot(s, "a").get("maxCommitSeq");
        // three commits in one push round, inside the 1 s min-rerun-interval that began with the first run:
        // the first notification arms the rerun at the interval's end, the others only set the dirty flag
        push("todos", todo("b1", "l1", "x"), todo("b2", "l1", "y"), todo("b3", "l1", "z"));
        Map<String, Object> rerun = snapshot(s, "a");
        assertEquals(List.of("b1", "b2", "b3", "t1"), ids(rerun), "one rerun sees the whole burst");
        assertEquals(seq + 3, rerun.get("maxCommitSeq"));
        assertEquals(2, answered("todosInList", "ok") - before, "the first run and one rerun, not one per commit");
    }

    /**
     * REMOTE.md §6 / §7: a rerun whose SQL fails (a division by zero the list's rows cause) is answered
     * {@code watch_error} {@code operation.query_failed} with the static message — nothing of the database error,
     * no partial snapshot — and the watch stays: the next commit that repairs the rows reruns it.
     */
    @Test
    void aFailingRerunIsAWatchErrorAndTheWatchStays() throws Exception {
        RealtimeSocket s = socket();
        send(s, watch("w1", "fragileTodosInList", "l1"));
        assertEquals(List.of("t1"), ids(snapshot(s, "w1")));
        push("todos", todo("t3", "l1", "division-zero"));
        Map<String, Object> m = next(s);
        assertEquals("watch_error", m.get("kind"), m.toString());
        assertEquals("w1", m.get("watchId"));
        assertEquals("operation.query_failed", m.get("code"));
        assertEquals(false, m.get("retryable"));
        assertEquals("registered query execution failed", m.get("message"));
        assertEquals(Set.of("revision", "kind", "watchId", "code", "message", "retryable"), m.keySet());
        assertEquals(1, watches.activeWatches(), "a later rerun failure keeps the watch");
        push("todos", todo("t3", "l1", "repaired"));
        assertEquals(List.of("t1", "t3"), ids(snapshot(s, "w1")));
        assertTrue(answered("fragileTodosInList", "operation.query_failed") >= 1);
    }

    @Test
    void reusedWatchIdIsInvalidAndTheActiveWatchStays() throws Exception {
        RealtimeSocket s = socket();
        send(s, watch("a", "todosInList", "l1"));
        snapshot(s, "a");
        send(s, watch("a", "todosInList", "l2"));
        watchError(s, "a", "operation.invalid_request", false);
        push("todos", todo("t4", "l1", "jam"));
        assertEquals(List.of("t1", "t4"), ids(snapshot(s, "a")), "the first registration still reruns");
    }

    @Test
    void unwatchSuppressesARunInFlightAndFreesTheId() throws Exception {
        RealtimeSocket s = socket();
        // slowTodosInList holds its run for 0.4 s (pg_sleep): the unwatch arrives while it runs
        send(s, watch("slow", "slowTodosInList", "l1"));
        send(s, unwatch("slow"));
        // the same id again, started after the first run: its snapshot would follow the suppressed one
        send(s, watch("slow", "slowTodosInList", "l2"));
        Map<String, Object> m = snapshot(s, "slow");
        assertEquals(List.of("t2"), ids(m), "the second registration's snapshot (l2), not the suppressed one (l1)");
        send(s, unwatch("slow"));
        await(() -> watches.activeWatches() == 0, "unwatch removes the registration");
        // an unwatch of an id that is not active is ignored; the socket goes on
        send(s, unwatch("never"));
        send(s, watch("a", "todosInList", "l1"));
        snapshot(s, "a");
    }

    @Test
    void closeRemovesEveryWatch() throws Exception {
        RealtimeSocket s = socket();
        send(s, watch("a", "todosInList", "l1"));
        send(s, watch("b", "notesInList", "l1"));
        Set<Object> first = new HashSet<>(); // the two first runs are concurrent: either order
        first.add(next(s).get("watchId"));
        first.add(next(s).get("watchId"));
        assertEquals(Set.of("a", "b"), first);
        assertEquals(2, watches.activeWatches());
        s.ws.sendClose(1000, "done").join();
        await(() -> watches.activeWatches() == 0, "close removes every watch");
        // commits afterwards find no watch; another socket still gets its reruns
        RealtimeSocket other = socket();
        send(other, watch("x", "todosInList", "l1"));
        snapshot(other, "x");
        push("todos", todo("t5", "l1", "tea"));
        assertEquals(List.of("t1", "t5"), ids(snapshot(other, "x")));
        assertTrue(s.binaries.isEmpty(), "the closed socket got nothing");
    }

    @Test
    void capsPerConnectionPerPartitionAndPerPod() throws Exception {
        RealtimeSocket s = socket();
        for (String id : List.of("a", "b", "c")) {
            send(s, watch(id, "todosInList", "l1"));
            snapshot(s, id);
        }
        send(s, watch("d", "todosInList", "l1"));
        watchError(s, "d", "sync.rate_limited", true);
        RealtimeSocket t = socket();
        send(t, watch("e", "todosInList", "l1"));
        snapshot(t, "e");
        // issue 45: the partition holds its 4 watches of the pod; another tenant's watch is still served
        send(t, watch("f", "todosInList", "l1"));
        watchError(t, "f", "sync.rate_limited", true);
        RealtimeSocket elsewhere = socket("writer", partition + "-other");
        send(elsewhere, watch("f", "todosInList", "l1"));
        snapshot(elsewhere, "f");
        assertEquals(5, watches.activeWatches());
        send(elsewhere, watch("g", "todosInList", "l1"));
        watchError(elsewhere, "g", "sync.rate_limited", true);
        // an unwatch frees a place of the pod and of its partition
        send(s, unwatch("a"));
        await(() -> watches.activeWatches() == 4, "unwatch releases the pod's place");
        send(t, watch("g", "todosInList", "l1"));
        snapshot(t, "g");
    }

    @Test
    void socketsPerPodAreCapped() throws Exception {
        for (int i = 0; i < 4; i++) {
            socket();
        }
        await(() -> openSockets() == 4, "four sockets open");
        try (RawHttp raw = RawHttp.open("localhost", port)) {
            RawHttp.Answer a = raw.upgrade("/operations/realtime", Map.of("x-actor-id", "writer"))
                    .read();
            assertEquals(429, a.status(), a.body());
            assertTrue(a.body().contains("sync.websocket_connection_limit"), a.body());
        }
        sockets.remove(0).ws.abort();
        await(() -> openSockets() == 3, "a closed socket frees its place");
        RealtimeSocket s = socket();
        send(s, watch("a", "todosInList", "l1"));
        snapshot(s, "a");
    }

    @Test
    void badMessagesAreAnsweredPrecisely() throws Exception {
        RealtimeSocket s = socket();
        // no usable watchId: the §5 error object
        for (String bad : List.of(
                "{",
                "[]",
                "{\"t\":\"string\",\"v\":\"x\"}",
                JSON.writeValueAsString(obj("revision", num(1), "kind", str("watch"))),
                JSON.writeValueAsString(obj("revision", num(1), "kind", str("watch"), "watchId", str(""))))) {
            sendBinary(s, bad.getBytes(StandardCharsets.UTF_8));
            Map<String, Object> m = next(s);
            assertEquals("error", m.get("kind"), bad + " -> " + m);
            assertEquals("operation.invalid_request", m.get("code"), bad);
            assertEquals(false, m.get("retryable"));
        }
        sendBinary(s, new byte[] {'{', (byte) 0xff, '}'});
        assertEquals("operation.invalid_request", next(s).get("code"), "invalid UTF-8");
        // a watchId: watch_error for it
        send(s, obj("revision", num(2), "kind", str("watch"), "watchId", str("w1")));
        watchError(s, "w1", "operation.invalid_request", false);
        send(s, obj("revision", num(1), "kind", str("subscribe"), "watchId", str("w2")));
        watchError(s, "w2", "operation.invalid_request", false);
        send(s, obj("revision", num(1), "kind", str("watch"), "watchId", str("w3"), "clientId", str("c")));
        watchError(s, "w3", "operation.invalid_request", false);
        ObjectNode extra = watch("w4", "todosInList", "l1");
        ((ArrayNode) extra.get("v")).add(JSON.createArrayNode().add("x").add(str("y")));
        send(s, extra);
        watchError(s, "w4", "operation.invalid_request", false);
        send(s, obj("revision", num(1), "kind", str("unwatch"), "watchId", str("w5"), "clientId", str("c")));
        watchError(s, "w5", "operation.invalid_request", false);
        // the registry and the query path, as over HTTP
        send(
                s,
                obj(
                        "revision",
                        num(1),
                        "kind",
                        str("watch"),
                        "watchId",
                        str("w6"),
                        "clientId",
                        str("watcher"),
                        "operationId",
                        str(prefix + "/nope"),
                        "params",
                        obj("listId", str("l1"))));
        watchError(s, "w6", "operation.unknown", false);
        send(
                s,
                obj(
                        "revision",
                        num(1),
                        "kind",
                        str("watch"),
                        "watchId",
                        str("w7"),
                        "clientId",
                        str("[\"remote-command\",\"x\"]"),
                        "operationId",
                        str(prefix + "/todosInList"),
                        "params",
                        obj("listId", str("l1"))));
        watchError(s, "w7", "sync.invalid_client_id", false);
        send(
                s,
                obj(
                        "revision",
                        num(1),
                        "kind",
                        str("watch"),
                        "watchId",
                        str("w8"),
                        "clientId",
                        str("watcher"),
                        "operationId",
                        str(prefix + "/todosInList"),
                        "params",
                        obj()));
        watchError(s, "w8", "operation.invalid_request", false);
        send(s, watch("w9", "todosInList", "l3")); // not among the actor's scopes
        watchError(s, "w9", "operation.forbidden", false);
        // none of them holds a registration: the ids are free, the caps untouched
        assertEquals(0, watches.activeWatches());
        send(s, watch("w9", "todosInList", "l1"));
        snapshot(s, "w9");
        assertTrue(answered("todosInList", "operation.forbidden") >= 1, "refusals counted by outcome code");
    }

    @Test
    void textMessagesAreAnsweredAsText() throws Exception {
        RealtimeSocket s = socket();
        s.ws.sendText(JSON.writeValueAsString(watch("t", "todosInList", "l1")), true)
                .join();
        String text = s.texts.poll(RealtimeSocket.WAIT.toSeconds(), TimeUnit.SECONDS);
        assertNotNull(text);
        @SuppressWarnings("unchecked")
        Map<String, Object> m = (Map<String, Object>) plain(JSON.readTree(text));
        assertEquals("snapshot", m.get("kind"));
        assertEquals(List.of("t1"), ids(m));
        push("todos", todo("t6", "l1", "rice"));
        text = s.texts.poll(RealtimeSocket.WAIT.toSeconds(), TimeUnit.SECONDS);
        assertNotNull(text, "the rerun in the watch's framing");
        assertTrue(s.binaries.isEmpty(), "nothing binary for a text watch");
        s.ws.sendText("nope", true).join();
        text = s.texts.poll(RealtimeSocket.WAIT.toSeconds(), TimeUnit.SECONDS);
        assertNotNull(text);
        @SuppressWarnings("unchecked")
        Map<String, Object> error = (Map<String, Object>) plain(JSON.readTree(text));
        assertEquals("operation.invalid_request", error.get("code"), "a bad text message is answered as text");
    }

    @Test
    void quietSocketsArePingedEveryHeartbeatInterval() throws Exception {
        // the test profile's syncular.realtime.heartbeat-interval is 1s; the JDK client answers pings itself
        AtomicInteger pings = new AtomicInteger();
        WebSocket ws = HttpClient.newHttpClient()
                .newWebSocketBuilder()
                .header("x-actor-id", "writer")
                .header("x-syncular-partition", partition)
                .buildAsync(URI.create("ws://localhost:" + port + "/operations/realtime"), new WebSocket.Listener() {
                    @Override
                    public CompletionStage<?> onPing(WebSocket w, ByteBuffer message) {
                        pings.incrementAndGet();
                        return WebSocket.Listener.super.onPing(w, message);
                    }
                })
                .get(RealtimeSocket.WAIT.toSeconds(), TimeUnit.SECONDS);
        try {
            await(() -> pings.get() >= 2, "two heartbeat pings on a socket with nothing else to say");
            assertTrue(!ws.isInputClosed(), "answered pings keep the socket open");
        } finally {
            ws.abort();
        }
    }

    @Test
    void theUpgradeIsAuthenticatedLikeTheSyncSocket() throws Exception {
        try (RawHttp raw = RawHttp.open("localhost", port)) {
            RawHttp.Answer a = raw.upgrade("/operations/realtime", Map.of()).read();
            assertEquals(401, a.status(), a.body());
            assertTrue(a.body().contains("sync.auth_required"), a.body());
        }
        try (RawHttp raw = RawHttp.open("localhost", port)) {
            RawHttp.Answer a = raw.head("GET", "/operations/realtime", Map.of("x-actor-id", "writer"))
                    .read();
            assertEquals(400, a.status(), "a plain GET is no upgrade: " + a.body());
        }
        // a socket of another partition sees its own partition only
        RealtimeSocket elsewhere = socket("writer", "watch-empty-" + UUID.randomUUID());
        send(elsewhere, watch("a", "todosInList", "l1"));
        Map<String, Object> m = snapshot(elsewhere, "a");
        assertEquals(List.of(), ids(m));
        assertEquals(0.0, m.get("maxCommitSeq"));
        assertNull(elsewhere.texts.peek());
    }
}
