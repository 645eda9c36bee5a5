package dev.syncular.server.realtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import dev.syncular.server.testsupport.HeldTransaction;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.LogCapture;
import dev.syncular.server.testsupport.PrometheusScrape;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.SyncTestClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.io.IOException;
import java.net.URI;
import java.nio.channels.ClosedChannelException;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;

/**
 * Swallowed realtime failures are logged once with their cause and counted
 * ({@code syncular_realtime_errors_total{kind}}): a failed ack write (§8.2; the §4.6 retention input) through the
 * running app, made to fail for real by cancelling the blocked {@code UPDATE} in PostgreSQL; a second one within
 * the minute is counted but not logged at WARN again; disconnects are DEBUG without a stack trace.
 */
@QuarkusTest
class RealtimeFailuresTest {
    @TestHTTPResource("/")
    URI base;

    @Inject
    SchemaWindow window;

    @Inject
    PostgresSyncStorage storage;

    @Inject
    Pool pool;

    static double errors(String kind) {
        PrometheusScrape scrape = PrometheusScrape.scrape();
        return scrape.value("syncular_realtime_errors_total", Map.of("kind", kind));
    }

    /** Acks {@code cursor} while the client's record is locked, and cancels the ack's blocked UPDATE. */
    void failAck(RealtimeSocket s, String partition, String clientId, long cursor) {
        try (HeldTransaction held = HeldTransaction.begin(
                pool,
                "SELECT 1 FROM " + storage.pgSchema() + ".sync_clients WHERE partition_id = '" + partition
                        + "' AND client_id = '" + clientId + "' FOR UPDATE")) {
            s.ack(cursor);
            int blocked = held.awaitBlocked();
            pool.preparedQuery("SELECT pg_cancel_backend($1)")
                    .execute(Tuple.of(blocked))
                    .await()
                    .atMost(RealtimeSocket.WAIT);
        }
    }

    @Test
    void aFailedAckWriteIsLoggedOnceWithItsCauseAndCountedEveryTime() throws Exception {
        String partition = "rf-" + UUID.randomUUID();
        SyncTestClient b = new SyncTestClient(
                window.current(), new HttpTransport(base.toString(), partition), "bob", "c-b-" + UUID.randomUUID());
        b.subscribe("s1", "todos", Map.of("list_id", List.of("l1")));
        b.upsert(
                "todos",
                Map.of("id", "r1", "list_id", "l1", "title", "t", "done", false, "position", 1L, "updated_at_ms", 1L),
                null);
        b.syncUntilIdle();
        RealtimeSocket s = RealtimeSocket.connect(base.toString(), partition, "bob", b.clientId);
        s.nextEvent("hello");
        double before = errors("ack_write");
        try (LogCapture log = LogCapture.of(RealtimeFailures.class.getName(), Level.FINE, "requestId")) {
            failAck(s, partition, b.clientId, b.subscriptions.get("s1").cursor);
            LogCapture.Line warn = log.await(
                    l -> l.message().contains("ack_write") && l.level().intValue() >= Level.WARNING.intValue(),
                    RealtimeSocket.WAIT);
            assertNotNull(warn.thrown(), "the cause is logged");
            assertTrue(warn.message().contains("syncular_realtime_errors_total{kind=\"ack_write\"}"), warn.message());
            // a second failure within the minute: counted, logged at DEBUG only
            failAck(s, partition, b.clientId, b.subscriptions.get("s1").cursor);
            log.await(
                    l -> l.message().contains("ack_write") && l.level().intValue() < Level.INFO.intValue(),
                    RealtimeSocket.WAIT);
            assertEquals(
                    1,
                    log.lines.stream()
                            .filter(l -> l.level().intValue() >= Level.WARNING.intValue())
                            .count(),
                    "one WARN line a minute per kind: " + log.lines);
        }
        assertEquals(before + 2, errors("ack_write"), "every failure is counted");
        // the socket itself is unharmed: the next ack is stored
        s.ack(b.subscriptions.get("s1").cursor);
        s.ws.abort();
    }

    @Test
    void everyKindIsExportedFromTheStart() {
        for (RealtimeFailures.Kind k : RealtimeFailures.Kind.values()) {
            assertTrue(errors(k.label) >= 0, k.label);
        }
    }

    @Test
    void disconnectsAreDebugWithoutAStackTrace() {
        assertTrue(RealtimeFailures.disconnect(new ClosedChannelException()));
        assertTrue(RealtimeFailures.disconnect(
                new IllegalStateException("write failed", new IOException("Connection reset by peer"))));
        assertTrue(RealtimeFailures.disconnect(new IOException("Broken pipe")));
        assertFalse(RealtimeFailures.disconnect(new IllegalStateException("canceling statement due to user request")));
        RealtimeFailures failures = new RealtimeFailures(new SimpleMeterRegistry());
        // the running app logs its own sockets' disconnects in the same category: this test's line is told apart
        // by its cause's message
        String marker = "connection reset by peer " + UUID.randomUUID();
        try (LogCapture log = LogCapture.of(RealtimeFailures.class.getName(), Level.FINE, "requestId")) {
            failures.disconnect(RealtimeFailures.Kind.DELTA_WRITE, new IOException(marker));
            List<LogCapture.Line> ours =
                    log.lines.stream().filter(l -> l.message().contains(marker)).toList();
            assertEquals(1, ours.size(), log.lines.toString());
            assertEquals(Level.FINE.intValue(), ours.get(0).level().intValue(), "DEBUG");
            assertNull(ours.get(0).thrown(), "no stack trace for an ordinary disconnect");
        }
    }
}
