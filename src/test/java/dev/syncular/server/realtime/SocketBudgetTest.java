package dev.syncular.server.realtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.RawHttp;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.Message;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The pod's memory for its sockets ({@code syncular.realtime.socket-budget}, {@link SocketBudget}), through the
 * running app: with room for six sockets (100 KiB at 16 KiB a socket), a seventh upgrade — sync or operations
 * watch — is refused before it opens, 429 {@code sync.websocket_connection_limit} with reason
 * {@code socket_budget} and {@code Retry-After}, and a closed socket gives its place back. With the six open, a
 * delta larger than the 4 KiB left is not queued: its client is woken {@code catchup-required} (§8.3) and pulls
 * the commit, while a small one is still delivered.
 */
@QuarkusTest
@OwnApp
@TestProfile(SocketBudgetTest.Budget.class)
class SocketBudgetTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    public static class Budget implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "syncular.realtime.socket-budget",
                    "100K",
                    "syncular.storage.pg-schema",
                    "sync_sockbudget_"
                            + UUID.randomUUID().toString().replace("-", "").substring(0, 10));
        }
    }

    @TestHTTPResource("/")
    URI base;

    @Inject
    SchemaWindow window;

    @Inject
    MeterRegistry registry;

    final String partition = "sockets-" + UUID.randomUUID();
    final List<RealtimeSocket> open = new ArrayList<>();

    @AfterEach
    void closeAll() {
        open.forEach(s -> s.ws.abort());
        await(() -> socketBytes() == 0, "every socket's share is given back");
    }

    double socketBytes() {
        return registry.get("syncular.realtime.socket.bytes").gauge().value();
    }

    static void await(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + RealtimeSocket.WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "timed out waiting: " + what);
            Thread.onSpinWait();
        }
    }

    SyncTestClient client(String actor) {
        SyncTestClient c =
                SyncTestClient.onListL1(window.current(), new HttpTransport(base.toString(), partition), actor);
        c.syncUntilIdle(); // subscribed to list l1: the socket's registration comes from this client's record
        return c;
    }

    RealtimeSocket connect(SyncTestClient c) throws InterruptedException {
        RealtimeSocket s = RealtimeSocket.connect(base.toString(), partition, c.actorId, c.clientId);
        open.add(s);
        s.nextEvent("hello");
        return s;
    }

    RawHttp.Answer upgrade(String path) throws Exception {
        try (RawHttp raw = RawHttp.open(base.getHost(), base.getPort())) {
            return raw.upgrade(path, Map.of("x-actor-id", "seventh", "x-syncular-partition", partition))
                    .read();
        }
    }

    void assertRefusedForTheBudget(RawHttp.Answer a) throws Exception {
        assertEquals(429, a.status(), a.body());
        JsonNode body = JSON.readTree(a.body());
        assertEquals("sync.websocket_connection_limit", body.get("code").asText(), a.body());
        assertEquals("socket_budget", body.path("details").path("reason").asText(), a.body());
        assertEquals("5", a.headers().get("retry-after"), a.headers().toString());
    }

    @Test
    void anUpgradeWithNoRoomIsRefusedAndAClosedSocketGivesItsPlaceBack() throws Exception {
        for (int i = 0; i < 6; i++) {
            connect(client("reader" + i));
        }
        await(() -> socketBytes() >= 6 * SocketBudget.SOCKET_BYTES, "six sockets counted");
        assertRefusedForTheBudget(upgrade("/realtime?clientId=c-seventh-" + UUID.randomUUID()));
        assertRefusedForTheBudget(upgrade("/operations/realtime"));

        open.remove(0).ws.abort();
        await(() -> socketBytes() < 6 * SocketBudget.SOCKET_BYTES, "the closed socket's share is given back");
        connect(client("seventh"));
    }

    @Test
    void aDeltaWithNoRoomWakesItsClientWhileASmallOneIsDelivered() throws Exception {
        SyncTestClient reader = client("reader");
        RealtimeSocket socket = connect(reader);
        for (int i = 1; i < 6; i++) {
            connect(client("other" + i));
        }
        await(() -> socketBytes() >= 6 * SocketBudget.SOCKET_BYTES, "six sockets counted");
        SyncTestClient writer = client("writer");

        writer.upsert("todos", todo("small-" + UUID.randomUUID(), "x".repeat(100)), null);
        writer.syncUntilIdle();
        Message delta = socket.nextDelta();
        assertTrue(
                delta.frames().stream().anyMatch(CommitFrame.class::isInstance),
                "a 100-byte row fits the room left: delivered as a delta " + delta.frames());

        writer.upsert("todos", todo("big-" + UUID.randomUUID(), "x".repeat(6_000)), null);
        writer.syncUntilIdle();
        assertEquals(
                "catchup-required",
                socket.nextEvent("sync").get("data").get("reason").asText(),
                "a 6 KB delta (under the 8 KiB delta cap of the test profile) has no room in the pod's socket budget: a wake-up instead");
        reader.syncUntilIdle(); // the woken client pulls the commit
        assertTrue(reader.table("todos").keySet().stream().anyMatch(id -> id.startsWith("big-")));
    }

    static Map<String, Object> todo(String id, String title) {
        return Map.of("id", id, "list_id", "l1", "title", title, "done", false, "position", 1L, "updated_at_ms", 1L);
    }
}
