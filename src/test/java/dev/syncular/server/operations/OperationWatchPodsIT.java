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
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.ServerProcess;
import dev.syncular.server.testsupport.StartsProcesses;
import dev.syncular.server.testsupport.SyncTestClient;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * REMOTE.md §6 across pods: two packaged servers as two operating-system processes on one PostgreSQL (one
 * storage schema); a watch on pod B's {@code <mount>/operations/realtime} reruns when pod A takes a commit to the
 * watched table ({@code POST /sync} on A), and pod A's watch when B takes one — the commit signal is the
 * storage's commit channel every pod's realtime hub listens on. A commit to another table reruns only the
 * watch of that table.
 */
@StartsProcesses
class OperationWatchPodsIT {
    private static final Path DIR = Path.of("src/test/resources/operations").toAbsolutePath();
    private static final String SCHEMA =
            "it_watch_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    private static final ObjectMapper JSON = new ObjectMapper();

    static ServerProcess podA;
    static ServerProcess podB;
    static CompiledSchema schema;
    static String prefix;

    static ServerProcess.Builder pod(String name) {
        return ServerProcess.builder("operation-watch-" + name, SCHEMA)
                .env(
                        "SYNCULAR_SCHEMA_PATH",
                        DIR.resolve("watch.syncular.ir.json").toString())
                .env(
                        "SYNCULAR_OPERATIONS_QUERIES_PATH",
                        DIR.resolve("watch.queries.ir.json").toString())
                .env("SYNCULAR_DEV_AUTH_ALLOWED_SCOPES", "{\"list_id\":[\"l1\",\"l2\"]}");
    }

    @BeforeAll
    static void start() throws Exception {
        schema = SchemaLoader.parse(Files.readString(DIR.resolve("watch.syncular.ir.json")));
        prefix = QueryIrLoader.documentId(Files.readAllBytes(DIR.resolve("watch.queries.ir.json")));
        podA = pod("a").start();
        podB = pod("b").start();
    }

    @AfterAll
    static void stop() throws Exception {
        ServerProcess.closeAll(podA, podB);
    }

    private static void push(ServerProcess pod, String partition, String table, Map<String, Object> row) {
        SyncTestClient c = new SyncTestClient(
                schema, new HttpTransport(pod.baseUrl(), partition), "writer", "writer-" + UUID.randomUUID());
        String id = c.upsert(table, row, null);
        c.syncUntilIdle();
        assertTrue(SyncTestClient.applied(c.result(id)), "push applied: " + c.result(id));
    }

    private static Map<String, Object> todo(String id) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", id);
        m.put("list_id", "l1");
        m.put("title", "t");
        m.put("done", false);
        m.put("position", 1L);
        m.put("updated_at_ms", 1_700_000_000_000L);
        m.put("attachment", null);
        return m;
    }

    private static RealtimeSocket socket(ServerProcess pod, String partition) {
        return RealtimeSocket.connect(
                URI.create(pod.baseUrl().replaceFirst("^http", "ws") + "/operations/realtime"),
                Map.of("x-actor-id", "writer", "x-syncular-partition", partition));
    }

    private static void watch(RealtimeSocket s, String watchId, String query) throws Exception {
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
                str(prefix + "/" + query),
                "params",
                obj("listId", str("l1")));
        s.ws.sendBinary(ByteBuffer.wrap(JSON.writeValueAsBytes(m)), true).join();
    }

    @SuppressWarnings("unchecked")
    private static List<Object> snapshotIds(RealtimeSocket s, String watchId) throws Exception {
        byte[] b = s.binaries.poll(RealtimeSocket.WAIT.toSeconds(), TimeUnit.SECONDS);
        assertNotNull(b, "a message within " + RealtimeSocket.WAIT);
        Map<String, Object> m = (Map<String, Object>) plain(JSON.readTree(b));
        assertEquals("snapshot", m.get("kind"), m.toString());
        assertEquals(watchId, m.get("watchId"), m.toString());
        List<Object> ids = new ArrayList<>();
        for (Object row : (List<Object>) m.get("rows")) {
            ids.add(((Map<String, Object>) row).get("id"));
        }
        return ids;
    }

    @Test
    void aCommitOnOnePodRerunsTheWatchesOfTheOther() throws Exception {
        String partition = "watch-pods-" + UUID.randomUUID();
        RealtimeSocket onB = socket(podB, partition);
        RealtimeSocket onA = socket(podA, partition);
        try {
            watch(onB, "b", "todosInList");
            watch(onA, "a", "todosInList");
            assertEquals(List.of(), snapshotIds(onB, "b"));
            assertEquals(List.of(), snapshotIds(onA, "a"));

            push(podA, partition, "todos", todo("x1"));
            assertEquals(List.of("x1"), snapshotIds(onB, "b"), "pod A's commit reruns pod B's watch");
            assertEquals(List.of("x1"), snapshotIds(onA, "a"), "and pod A's own");

            push(podB, partition, "todos", todo("x2"));
            assertEquals(List.of("x1", "x2"), snapshotIds(onA, "a"), "pod B's commit reruns pod A's watch");
            assertEquals(List.of("x1", "x2"), snapshotIds(onB, "b"));

            // a commit to notes on A: the notes watch on B reruns; a todos watch registered after its snapshot
            // answers next (the todos watch "b" would have been rerun by the same notification, before it)
            watch(onB, "n", "notesInList");
            assertEquals(List.of(), snapshotIds(onB, "n"));
            Map<String, Object> note = new LinkedHashMap<>();
            note.put("id", "n1");
            note.put("list_id", "l1");
            note.put("body", "b");
            push(podA, partition, "notes", note);
            assertEquals(List.of("n1"), snapshotIds(onB, "n"));
            watch(onB, "c", "todosInList");
            assertEquals(List.of("x1", "x2"), snapshotIds(onB, "c"), "no rerun of b for a commit to notes");
        } finally {
            onA.ws.abort();
            onB.ws.abort();
        }
    }
}
