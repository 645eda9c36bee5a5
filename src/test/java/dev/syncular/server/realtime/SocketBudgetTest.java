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
 * running app: with room for six sockets (128 KiB, of which sockets may fill three quarters at 16 KiB a socket), a
 * seventh upgrade — sync or operations watch — is refused before it opens, 429 {@code
 * sync.websocket_connection_limit} with reason {@code socket_budget} and {@code Retry-After}, and a closed socket
 * gives its place back. With the six open, the 32 KiB kept for outbound bytes still carries a commit's six deltas; a
 * delta larger than that is not queued: its client is woken {@code catchup-required} (§8.3) and pulls the commit.
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
                    "128K",
                    // a delta past the 32 KiB kept for outbound bytes, under the delta cap (8 KiB in the test profile)
                    "syncular.realtime.max-delta-bytes",
                    "64K",
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

        // every socket place taken, the room kept for outbound bytes still carries deltas: the six sockets all
        // subscribe the list, so each commit's delta goes to six (6 × 4 KB fit the 32 KiB, 6 × 20 KB would not)
        for (int size : new int[] {100, 4_000}) {
            writer.upsert("todos", todo("fits-" + UUID.randomUUID(), "x".repeat(size)), null);
            writer.syncUntilIdle();
            Message delta = socket.nextDelta();
            assertTrue(
                    delta.frames().stream().anyMatch(CommitFrame.class::isInstance),
                    "six deltas of a " + size + "-byte row fit the 32 KiB kept for outbound bytes " + delta.frames());
        }

        writer.upsert("todos", todo("big-" + UUID.randomUUID(), "x".repeat(40_000)), null);
        writer.syncUntilIdle();
        assertEquals(
                "catchup-required",
                socket.nextEvent("sync").get("data").get("reason").asText(),
                "a 40 KB delta (under the profile's 64 KiB delta cap) has no room in the pod's socket budget: a wake-up instead");
        reader.syncUntilIdle(); // the woken client pulls the commit
        assertTrue(reader.table("todos").keySet().stream().anyMatch(id -> id.startsWith("big-")));
    }

    static Map<String, Object> todo(String id, String title) {
        return Map.of("id", id, "list_id", "l1", "title", title, "done", false, "position", 1L, "updated_at_ms", 1L);
    }
}
