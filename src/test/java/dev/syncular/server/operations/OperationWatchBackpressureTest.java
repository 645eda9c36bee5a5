package dev.syncular.server.operations;

import static dev.syncular.server.operations.OperationsResourceTest.num;
import static dev.syncular.server.operations.OperationsResourceTest.obj;
import static dev.syncular.server.operations.OperationsResourceTest.plain;
import static dev.syncular.server.operations.OperationsResourceTest.str;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.WebhookResource;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * REMOTE.md §6 with the sync socket's outbound bound (docs/OPERATIONS.md, {@code syncular.realtime.outbound-*}):
 * a watch client that stops reading while its snapshots (about 1 MB each) keep coming is closed with 4290 once its
 * buffer passes twice the budget or does not drain by the deadline, and its watch leaves the pod, while pushes
 * and a reading watcher go on. Heartbeats are slow here, so the idle reaper (three silent intervals) does not close
 * the stuck client first.
 */
@QuarkusTest
@OwnApp
@TestProfile(OperationWatchBackpressureTest.Profile.class)
class OperationWatchBackpressureTest {
    static final Path DIR = OperationsResourceTest.DIR;
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * The watch schema and queries with a fast rerun, a small outbound budget, a 2 s stuck deadline and slow heartbeats
     * (this class), plus the hostile queries, a row cap, a row validator bean that reads through
     * {@code queryAuthoritative} ({@link LockedListValidator}) and the validator webhook with declared evidence
     * ({@link QueryAuthoritativeTest}, which opens no watch and no socket). This class's pushes are validated too: its
     * partition holds no {@code locked} note and the webhook answers {@code {}} unless a test scripts it (none here
     * does; QueryAuthoritativeTest resets it before each test).
     */
    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            String countAllId;
            try {
                countAllId = QueryIrLoader.documentId(Files.readAllBytes(DIR.resolve("hostile.queries.ir.json")))
                        + "/countAll";
            } catch (java.io.IOException e) {
                throw new IllegalStateException(e);
            }
            Map<String, String> m = new HashMap<>();
            m.put("syncular.schema.path", DIR.resolve("watch.syncular.ir.json").toString());
            m.put("syncular.storage.pg-schema", "operations_watch_bp_test");
            m.put(
                    "syncular.operations.queries.path",
                    DIR.resolve("watch.queries.ir.json") + "," + DIR.resolve("hostile.queries.ir.json"));
            m.put("syncular.operations.queries.max-rows-by-query.allTodosCapped", "2");
            m.put("syncular.dev-auth.allowed-scopes", "{\"list_id\":[\"l1\",\"l2\"]}");
            m.put("syncular.operations.watch.min-rerun-interval", "50ms");
            m.put("syncular.realtime.outbound-buffer-bytes", "256K");
            m.put("syncular.realtime.outbound-stuck-timeout", "2s");
            m.put("syncular.realtime.heartbeat-interval", "60s");
            m.put("syncular.policy.validator-webhook.url", "${webhook.base}/validate");
            m.put("syncular.policy.validator-webhook.secret", WebhookResource.SECRET);
            m.put(
                    "syncular.policy.validator-webhook.evidence",
                    "[{\"name\":\"notes\",\"query\":\"notesInList\",\"table\":\"todos\","
                            + "\"params\":{\"listId\":{\"row\":\"list_id\"}}},"
                            + "{\"name\":\"todoCount\",\"query\":\"" + countAllId + "\",\"params\":{}}]");
            return m;
        }

        @Override
        public Set<Class<?>> getEnabledAlternatives() {
            return Set.of(LockedListValidator.class);
        }

        @Override
        public List<TestResourceEntry> testResources() {
            return List.of(new TestResourceEntry(WebhookResource.class));
        }
    }

    @Inject
    SchemaWindow window;

    @Inject
    QueryWatches watches;

    @Inject
    MeterRegistry registry;

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    private final String partition = "watch-bp-" + UUID.randomUUID();

    private void push(String id, String title) {
        SyncTestClient c = new SyncTestClient(
                window.current(),
                new HttpTransport("http://localhost:" + port, partition),
                "writer",
                "writer-" + UUID.randomUUID());
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", id);
        m.put("list_id", "l1");
        m.put("title", title);
        m.put("done", false);
        m.put("position", 1L);
        m.put("updated_at_ms", 1L);
        m.put("attachment", null);
        String commit = c.upsert("todos", m, null);
        c.syncUntilIdle();
        assertTrue(SyncTestClient.applied(c.result(commit)), "push applied: " + c.result(commit));
    }

    private RealtimeSocket socket(boolean paused) {
        URI uri = URI.create("ws://localhost:" + port + "/operations/realtime");
        Map<String, String> headers = Map.of("x-actor-id", "writer", "x-syncular-partition", partition);
        return paused ? RealtimeSocket.connectPaused(uri, headers) : RealtimeSocket.connect(uri, headers);
    }

    private static void watch(RealtimeSocket s, String watchId) throws Exception {
        ObjectNode m = obj(
                "revision",
                num(1),
                "kind",
                str("watch"),
                "watchId",
                str(watchId),
                "clientId",
                str("watcher"),
                "operationId",
                str(QueryIrLoader.documentId(Files.readAllBytes(DIR.resolve("watch.queries.ir.json")))
                        + "/todosInList"),
                "params",
                obj("listId", str("l1")));
        s.ws.sendBinary(ByteBuffer.wrap(JSON.writeValueAsBytes(m)), true).join();
    }

    @SuppressWarnings("unchecked")
    private static List<Object> snapshotIds(RealtimeSocket s) throws Exception {
        byte[] b = s.binaries.poll(RealtimeSocket.WAIT.toSeconds(), TimeUnit.SECONDS);
        assertNotNull(b, "a snapshot within " + RealtimeSocket.WAIT);
        Map<String, Object> m = (Map<String, Object>) plain(JSON.readTree(b));
        assertEquals("snapshot", m.get("kind"), m.toString());
        List<Object> ids = new ArrayList<>();
        for (Object row : (List<Object>) m.get("rows")) {
            ids.add(((Map<String, Object>) row).get("id"));
        }
        return ids;
    }

    private static void await(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + RealtimeSocket.WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "timed out waiting: " + what);
            LockSupport.parkNanos(5_000_000); // a poll, not a wait for time
        }
    }

    private double stuckCloses() {
        return registry.counter("syncular.realtime.outbound.stuck.closes").count();
    }

    @Test
    void aStuckReaderIsClosedWith4290AndItsWatchLeavesThePod() throws Exception {
        String big = "x".repeat(100_000);
        for (int i = 0; i < 10; i++) {
            push(String.format("big%02d", i), big);
        }
        double closesBefore = stuckCloses();
        RealtimeSocket reader = socket(false);
        watch(reader, "w1");
        assertEquals(10, snapshotIds(reader).size());
        RealtimeSocket stuck = socket(true);
        watch(stuck, "w1");
        await(() -> watches.activeWatches() == 2, "both watches are registered");

        // each commit to the watched table reruns both watches: the stuck client's snapshots pile up in the
        // kernel's socket buffers, then in the pod's, until its budget closes it
        int commits = 0;
        while (watches.activeWatches() > 1) {
            assertTrue(commits < 200, "the stuck socket was never closed");
            push("more" + commits, "more");
            commits++;
            long until = System.nanoTime() + 200_000_000L;
            while (watches.activeWatches() > 1 && System.nanoTime() < until) {
                LockSupport.parkNanos(10_000_000); // a poll for the close, not a wait for time
            }
        }
        assertTrue(stuckCloses() > closesBefore, "closed by the outbound budget");
        // its transport is closed even though it never reads its close frame: it leaves the pod
        await(
                () -> registry.get("syncular.operations.watch.connections")
                                .gauge()
                                .value()
                        == 1,
                "only the reading watcher stays connected");
        stuck.resume();
        // the client learns of it as 4290 if it reaches the close frame, else as the transport's end (1006, -1)
        Integer code = stuck.closed.completeOnTimeout(null, 5, TimeUnit.SECONDS).get();
        assertTrue(code == null || code == 4290 || code == 1006 || code == -1, "closed with " + code);

        // the reading watcher kept its watch and receives the rerun of the last commit
        assertEquals(1, watches.activeWatches());
        int expected = 10 + commits;
        await(
                () -> {
                    byte[] last = null;
                    for (byte[] b; (b = reader.binaries.poll()) != null; ) {
                        last = b;
                    }
                    if (last != null) {
                        reader.binaries.add(last);
                        try {
                            if (snapshotIds(reader).size() == expected) {
                                return true;
                            }
                        } catch (Exception e) {
                            throw new AssertionError(e);
                        }
                    }
                    return false;
                },
                "the reading watcher's snapshot holds every row");
        reader.ws.abort();
        stuck.ws.abort();
        await(() -> watches.activeWatches() == 0, "closing removes every watch");
    }
}
