package dev.syncular.server.policy;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.PrometheusScrape;
import dev.syncular.server.testsupport.Readiness;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.Message;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * Fan-out shares (issue 45, {@code syncular.realtime.fanout-bytes-per-second-per-partition}, 2K here) through the
 * running app's realtime socket: a partition whose commits fan out more delta bytes than its share has its next
 * delta replaced by a {@code catchup-required} wake-up (§8.3) and its client catches up by a pull, while in the same
 * moment another tenant's socket receives its delta.
 */
@QuarkusTest
@OwnApp
@TestProfile(PushRateTest.Profile.class)
class FanoutShareTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    @Inject
    SchemaWindow window;

    @Inject
    PostgresSyncStorage storage;

    private String base() {
        return "http://localhost:" + port + "/";
    }

    /**
     * A bootstrapped reader of list l1 of {@code partition} on a socket that delivers deltas (§8.2); {@code inOrder}:
     * its messages in one queue, text and binary together.
     */
    private RealtimeSocket reader(SyncTestClient b, String partition, boolean inOrder) throws Exception {
        b.syncUntilIdle();
        RealtimeSocket s = inOrder
                ? RealtimeSocket.connectInOrder(base(), partition, b.actorId, b.clientId)
                : RealtimeSocket.connect(base(), partition, b.actorId, b.clientId);
        JsonNode hello = inOrder
                ? new com.fasterxml.jackson.databind.ObjectMapper()
                        .readTree(next(s, r -> r.isText() && r.text().contains("\"hello\""))
                                .text())
                        .get("data")
                : s.nextEvent("hello").get("data");
        if (hello.get("requiresSync").asBoolean()) {
            long cursor = b.subscriptions.get("todos").cursor;
            s.ack(cursor);
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (storage.readClient(partition, b.clientId)
                            .await()
                            .atMost(WAIT)
                            .cursor()
                    != cursor) {
                assertTrue(System.nanoTime() < deadline, "ack not stored");
            }
        }
        return s;
    }

    /** The next message of an in-order socket that {@code wanted} accepts (heartbeats and the like skipped). */
    private static RealtimeSocket.Received next(RealtimeSocket s, Predicate<RealtimeSocket.Received> wanted)
            throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (true) {
            RealtimeSocket.Received r = s.inOrder.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
            assertTrue(r != null, "no message within " + WAIT);
            if (wanted.test(r)) {
                return r;
            }
        }
    }

    private static Map<String, Object> wide(String id) {
        Map<String, Object> row = new HashMap<>(TodoClients.todo(id, "w".repeat(1500), false));
        return row;
    }

    private static double refusals() {
        return PrometheusScrape.scrape().value("syncular_realtime_fanout_share_refusals_total", Map.of());
    }

    @Test
    void aPartitionPastItsFanoutShareIsWokenWhileAnotherTenantGetsItsDelta() throws Exception {
        // readiness waits for the realtime LISTEN: a commit before it would never be announced to the sockets
        Readiness.await(200, WAIT);
        String loud = "fanout-loud-" + UUID.randomUUID();
        String quiet = "fanout-quiet-" + UUID.randomUUID();
        TodoClients loudClients = new TodoClients(window.current(), port, loud);
        TodoClients quietClients = new TodoClients(window.current(), port, quiet);
        SyncTestClient writer = loudClients.client("writer");
        SyncTestClient quietWriter = quietClients.client("writer");
        RealtimeSocket loudSocket = reader(loudClients.client("reader"), loud, true);
        RealtimeSocket quietSocket = reader(quietClients.client("reader"), quiet, false);
        double before = refusals();

        // 4 KB of burst: the first deltas of ~1.6 KB go out, then the partition's share is used and its next delta
        // becomes a wake-up; the refusal is counted when the fan-out meets it
        for (int i = 0; i < 6; i++) {
            writer.upsert("todos", wide("wide-" + i), null);
            writer.sync();
        }
        RealtimeSocket.Received first = next(loudSocket, r -> !r.isText());
        assertTrue(first.binary().length > 1500, "the first delta went out whole");
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (refusals() < before + 1) {
            assertTrue(System.nanoTime() < deadline, "no fan-out share refusal within " + WAIT);
        }
        long deltas = 1 + loudSocket.inOrder.stream().filter(r -> !r.isText()).count();
        assertTrue(deltas <= 4, "deltas within the 4 KB share: " + deltas);

        // the same moment: the other tenant's commit reaches its socket as a delta
        quietWriter.upsert("todos", wide("quiet"), null);
        quietWriter.sync();
        Message delta = quietSocket.nextDelta();
        assertTrue(delta.frames().stream().anyMatch(f -> f instanceof CommitFrame), "a delta: " + delta.frames());
        loudSocket.ws.abort();
        quietSocket.ws.abort();
    }
}
