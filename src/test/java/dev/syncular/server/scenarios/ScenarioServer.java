package dev.syncular.server.scenarios;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.storage.ClientRecord;
import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import dev.syncular.server.sync.SyncScenariosContract;
import dev.syncular.server.testsupport.GrantTable;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.SocketTransport;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.CommitStatus;
import dev.syncular.server.wire.OpResult;
import dev.syncular.server.wire.PushResult;
import io.quarkus.arc.Arc;
import io.vertx.mutiny.sqlclient.Pool;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.eclipse.microprofile.config.ConfigProvider;

/**
 * The running scenario app ({@code testsupport.ScenarioAppProfile}) as a scenario sees it: real HTTP and WebSocket
 * round trips to its port, one partition of its own (a test instance is made per test method, and each makes one of
 * these), scopes from the {@link GrantTable}, and the app's storage for what the scenarios check on the server side
 * (rows, the horizon, pruning). Beans are looked up when first used, inside the running app.
 */
final class ScenarioServer extends SyncScenariosContract.PostgresBackedServer {
    static final CompiledSchema SCHEMA = SyncScenariosContract.SCHEMA;
    static final Duration WAIT = Duration.ofSeconds(60);

    private final String partition = "p-" + UUID.randomUUID();

    /** {@code http://localhost:<test port>}. */
    String base() {
        return "http://localhost:" + ConfigProvider.getConfig().getValue("quarkus.http.test-port", Integer.class);
    }

    @Override
    public SyncTestClient.Transport transport() {
        return new HttpTransport(base(), partition);
    }

    @Override
    public String partition() {
        return partition;
    }

    @Override
    public void allow(String actorId, Map<String, List<String>> allowed) {
        Arc.container().instance(GrantTable.class).get().grant(partition, actorId, allowed);
    }

    /** Allows each actor the one project scope {@code project_id = project}. */
    void allow(String project, String... actors) {
        for (String a : actors) {
            allow(a, Map.of("project_id", List.of(project)));
        }
    }

    @Override
    protected PostgresSyncStorage storage() {
        return Arc.container().instance(PostgresSyncStorage.class).get();
    }

    @Override
    protected Pool pool() {
        return Arc.container().instance(Pool.class).get();
    }

    /** The app's storage, for the server-side checks. */
    PostgresSyncStorage store() {
        return storage();
    }

    /** The app's connection pool (a {@code HeldTransaction} of a test, the storage schema's tables). */
    Pool connections() {
        return pool();
    }

    long horizonSeq() {
        return storage().readPartition(partition).await().atMost(WAIT).horizonSeq();
    }

    /** A client of {@code actor} subscribed to the notes of each project, as {@code notes-<project>}. */
    SyncTestClient client(String actor, String clientId, String... projects) {
        SyncTestClient c = new SyncTestClient(SCHEMA, transport(), actor, clientId);
        for (String p : projects) {
            c.subscribe("notes-" + p, "notes", Map.of("project_id", List.of(p)));
        }
        return c;
    }

    /** {@link #client} after its first round (§2.1 epoch acquisition), so its next round pushes. */
    SyncTestClient synced(String actor, String clientId, String... projects) {
        SyncTestClient c = client(actor, clientId, projects);
        c.syncUntilIdle();
        return c;
    }

    /** Opens the §8 realtime channel of {@code clientId} as {@code actor} in this partition. */
    RealtimeSocket connect(String actor, String clientId) {
        return RealtimeSocket.connect(base() + "/", partition, actor, clientId);
    }

    /** A client of {@code actor} whose rounds ride {@code socket} (§8.7), subscribed to the notes of each project. */
    SyncTestClient overSocket(RealtimeSocket socket, String actor, String clientId, String... projects) {
        SyncTestClient c = new SyncTestClient(
                SCHEMA, new SocketTransport(socket, new HttpTransport(base(), partition), 7), actor, clientId);
        for (String p : projects) {
            c.subscribe("notes-" + p, "notes", Map.of("project_id", List.of(p)));
        }
        return c;
    }

    /** The client's stored cursor record (§4.5), or {@code null} when it has none. */
    ClientRecord record(String clientId) {
        return storage().readClient(partition, clientId).await().atMost(WAIT);
    }

    /**
     * Waits until the stored client record carries {@code cursor} (a §8.2 ack applied): each poll waits on the answer
     * of one storage read, until the deadline.
     */
    void awaitStoredCursor(String clientId, long cursor) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (record(clientId) == null || record(clientId).cursor() != cursor) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("ack not stored: cursor " + cursor);
            }
        }
    }

    /** Acks {@code cursor} on the socket (§8.2) and waits until the server stored it. */
    void ack(RealtimeSocket socket, SyncTestClient c, long cursor) {
        socket.ack(cursor);
        awaitStoredCursor(c.clientId, cursor);
    }

    /** A full notes row (every column present). */
    static Map<String, Object> note(String id, String project, String title) {
        return SyncScenariosContract.note(id, project, title);
    }

    /**
     * The client holds exactly the server's {@code notes} rows of {@code project}: the same ids, versions and
     * values (§2.2).
     */
    void assertConverged(SyncTestClient c, String project) {
        Map<String, StoredRow> server = rows("notes");
        Map<String, Long> serverVersions = new TreeMap<>();
        server.forEach((id, r) -> {
            if (project.equals(r.values()[1])) {
                serverVersions.put(id, r.serverVersion());
            }
        });
        Map<String, Long> localVersions = new TreeMap<>();
        c.table("notes").forEach((id, r) -> {
            if (project.equals(r.values()[1])) {
                localVersions.put(id, r.version());
            }
        });
        assertEquals(serverVersions, localVersions, c.clientId);
        c.table("notes").forEach((id, r) -> {
            if (project.equals(r.values()[1])) {
                assertArrayEquals(server.get(id).values(), r.values(), id);
            }
        });
    }

    /**
     * A {@code rejected} commit (§6.3): no {@code commitSeq}, one {@code error} record at {@code opIndex} with
     * {@code code}, its §10.2 retryability; yields the record.
     */
    static OpResult.Error assertRejected(PushResult r, int opIndex, String code, boolean retryable) {
        assertEquals(CommitStatus.REJECTED, r.status(), String.valueOf(r));
        assertNull(r.commitSeq());
        assertEquals(1, r.results().size());
        OpResult.Error e = assertInstanceOf(OpResult.Error.class, r.results().get(0));
        assertEquals(opIndex, e.opIndex());
        assertEquals(code, e.code());
        assertEquals(retryable, e.retryable());
        return e;
    }
}
