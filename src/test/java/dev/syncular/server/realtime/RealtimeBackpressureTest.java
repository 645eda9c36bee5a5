package dev.syncular.server.realtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.testsupport.AdminRecoveryProfile;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.PushResult;
import dev.syncular.server.wire.realtime.ControlMessages;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * §8.7 backpressure, §8.2 flow control, §8.3 wake-ups: sockets that stop reading while commits of ~200 KB
 * flow. Every push succeeds; each stuck socket is refused further deltas once its outbound buffer passes
 * {@code syncular.realtime.outbound-buffer-bytes}, is sent a {@code catchup-required} wake-up and, still stuck
 * after {@code syncular.realtime.outbound-stuck-timeout}, is closed with 4290 — and leaves the pod even when
 * it never reads its close; a reading client on the same scope receives every delta once, in order. The settings
 * (1 MiB buffer and delta cap, no count cap, 2 s deadline, 30 s heartbeats) are in {@link AdminRecoveryProfile}, whose
 * app this class shares; it pushes only todos not done (no reactions there) and reads the counters as deltas.
 */
@QuarkusTest
@OwnApp
@TestProfile(AdminRecoveryProfile.class)
class RealtimeBackpressureTest {
    static final int MAX_COMMITS = 400;
    static final int ROW_BYTES = 200_000;

    @TestHTTPResource("/")
    URI base;

    @Inject
    SchemaWindow window;

    @Inject
    PodRealtime realtime;

    final String partition = "stuck-" + UUID.randomUUID();

    SyncTestClient client(String actor) {
        SyncTestClient c =
                SyncTestClient.onListL1(window.current(), new HttpTransport(base.toString(), partition), actor);
        c.syncUntilIdle();
        return c;
    }

    double counter(String name) {
        RealtimeMetrics m = realtime.hub().metrics();
        return name.endsWith("closes") ? m.stuckCloses() : m.budgetRefusals();
    }

    static void await(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + RealtimeSocket.WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, what);
            Thread.onSpinWait();
        }
    }

    @Test
    void stuckSocketsAreWokenThenClosedWhileReadersAndPushesGoOn() throws Exception {
        double closesBefore = counter("syncular.realtime.outbound.stuck.closes");
        double refusalsBefore = counter("syncular.realtime.outbound.refusals");
        // registered on an empty partition: nobody is behind, every socket would get deltas
        SyncTestClient r = client("reader");
        RealtimeSocket readerSocket = RealtimeSocket.connect(base.toString(), partition, r.actorId, r.clientId);
        JsonNode hello = readerSocket.nextEvent("hello").get("data");
        assertFalse(hello.get("requiresSync").asBoolean());
        RealtimeExactlyOnceTest.Reader reader = new RealtimeExactlyOnceTest.Reader(readerSocket);
        reader.start();
        List<RealtimeSocket> stuck = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            SyncTestClient s = client("stuck" + i);
            stuck.add(RealtimeSocket.connectPaused(base.toString(), partition, s.actorId, s.clientId));
        }
        await(() -> realtime.hub().sessionCount(partition) == 5, "all five sockets joined");

        SyncTestClient w = client("writer");
        List<Long> pushed = new ArrayList<>();
        String big = "x".repeat(ROW_BYTES);
        // commits flow until every stuck socket has been refused a delta (the kernel's socket buffers take the
        // first megabytes), and a few more after that
        int after = 0;
        for (int i = 0; after < 5; i++) {
            assertTrue(i < MAX_COMMITS, "the stuck sockets were never refused a delta");
            if (counter("syncular.realtime.outbound.refusals") - refusalsBefore >= 4) {
                after++;
            }
            String id = w.upsert(
                    "todos",
                    Map.of(
                            "id",
                            "big" + i,
                            "list_id",
                            "l1",
                            "title",
                            big,
                            "done",
                            false,
                            "position",
                            (long) i,
                            "updated_at_ms",
                            1L),
                    null);
            Message response = w.sync(); // an HTTP failure would throw: no push fails
            PushResult result = w.result(id);
            assertTrue(SyncTestClient.applied(result), "push " + i + " applied: " + result);
            pushed.add(result.commitSeq());
        }

        // the stuck sockets are refused deltas and, at the deadline, closed
        await(
                () -> counter("syncular.realtime.outbound.stuck.closes") - closesBefore >= 4,
                "every stuck socket is closed after the deadline: refusals "
                        + (counter("syncular.realtime.outbound.refusals") - refusalsBefore) + ", closes "
                        + (counter("syncular.realtime.outbound.stuck.closes") - closesBefore) + ", reader got "
                        + reader.seqs.size() + " wake " + reader.wake.get() + " failure " + reader.failure.get());
        assertTrue(counter("syncular.realtime.outbound.refusals") - refusalsBefore >= 4);
        // three of them read now: what was queued for them ends with the wake-up, then the close (4290)
        for (RealtimeSocket s : stuck.subList(0, 3)) {
            s.resume();
        }
        for (RealtimeSocket s : stuck.subList(0, 3)) {
            int code = s.closed.get(RealtimeSocket.WAIT.toSeconds(), TimeUnit.SECONDS);
            if (code == OutboundBudget.STUCK_CLOSE_CODE) {
                String wake = s.texts.stream()
                        .filter(t -> ControlMessages.readTree(t)
                                .path("event")
                                .asText()
                                .equals("sync"))
                        .findFirst()
                        .orElse(null);
                assertTrue(wake != null, "the wake-up precedes the close");
                assertEquals(
                        "catchup-required",
                        ControlMessages.readTree(wake).get("data").get("reason").asText());
                assertTrue(s.binaries.size() < pushed.size(), "deltas stopped at the budget");
            } else {
                // the transport was closed before this client got to its close frame: what it held was discarded
                assertEquals(
                        -1,
                        code,
                        "closed with 4290 or by the transport; binaries " + s.binaries.size() + " texts " + s.texts);
            }
        }
        // the fourth never reads: its transport is closed all the same, and it leaves the pod
        await(() -> realtime.hub().sessionCount(partition) == 1, "only the reader stays connected");

        reader.awaitSeq(pushed.get(pushed.size() - 1));
        reader.stop.set(true);
        reader.join();
        assertEquals(null, reader.failure.get());
        assertEquals(null, reader.wake.get(), "the reading client was never woken");
        assertEquals(pushed, reader.seqs, "the reading client got every delta once, in order");
        readerSocket.ws.abort();
        stuck.forEach(s -> s.ws.abort());
    }
}
