package dev.syncular.server.realtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.SyncTestClient;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.net.URI;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Appendix B 11 (c) and (d) on one pod, through the running app's sockets (§8.7 "One round in flight",
 * "Interleaving"): round bytes while a response is in flight are not processed and close the connection; a commit
 * landing during a socket round — the client's own push in it, or another client's push over HTTP while the
 * round's response streams — is a {@code catchup-required} wake-up, never a delta, never delivered twice, and deltas
 * resume after the ack that covers it. {@link InterleavingRuns} repeats each case
 * ({@code -Dinterleaving.runs}, {@code -Dinterleaving.busy}); the two-pod case is
 * {@link TwoPodRealtimeIT}.
 */
@QuarkusTest
class RealtimeInterleavingTest {
    @TestHTTPResource("/")
    URI base;

    @Inject
    SchemaWindow window;

    final String partition = "interleave-" + UUID.randomUUID();

    String base() {
        String b = base.toString();
        return b.endsWith("/") ? b.substring(0, b.length() - 1) : b;
    }

    SyncTestClient writer(String actor) {
        SyncTestClient c = SyncTestClient.onListL1(window.current(), new HttpTransport(base(), partition), actor);
        c.syncUntilIdle();
        return c;
    }

    @Test
    void B11d_ownPushDuringTheRoundIsAWakeUpNeverADelta() throws Exception {
        InterleavingRuns.Outcomes outcomes = new InterleavingRuns.Outcomes();
        try (AutoCloseable busy = InterleavingRuns.busyCpu()) {
            InterleavingRuns.Client a = InterleavingRuns.prepare(window.current(), base(), partition, 0);
            InterleavingRuns.ownPush(a, writer("bob"), InterleavingRuns.runs(), outcomes);
            a.socket.ws.abort();
        }
        outcomes.print("B11d own push, one pod");
    }

    @Test
    void B11d_anotherClientsCommitDuringTheRoundIsAWakeUpNeverADelta() throws Exception {
        InterleavingRuns.Outcomes outcomes = new InterleavingRuns.Outcomes();
        try (AutoCloseable busy = InterleavingRuns.busyCpu()) {
            InterleavingRuns.Client a =
                    InterleavingRuns.prepare(window.current(), base(), partition, InterleavingRuns.REPLAYED);
            InterleavingRuns.othersPush(a, writer("bob"), InterleavingRuns.runs(), outcomes);
            a.socket.ws.abort();
        }
        outcomes.print("B11d another client's push, one pod");
    }

    /**
     * B 11 (c): a second request sent right behind the first, while the first round runs, is not processed (its
     * push is never applied) and closes the connection (1002).
     */
    @Test
    void B11c_roundBytesWhileStreamingDropTheConnection() throws Exception {
        SyncTestClient c = writer("carol");
        RealtimeSocket s = RealtimeSocket.connect(base.toString(), partition, c.actorId, c.clientId);
        s.nextEvent("hello");
        byte[] first = c.buildRequest().encode();
        c.upsert("todos", InterleavingRuns.todo("pipelined", "l1"), null);
        byte[] second = c.buildRequest().encode();
        s.sendOneMessage(first, 0);
        s.sendOneMessage(second, 0);
        assertEquals(1002, s.closed.get(RealtimeSocket.WAIT.toSeconds(), TimeUnit.SECONDS), s.closeReason());
        assertEquals("sync round protocol violation", s.closeReason());
        SyncTestClient reader = writer("dave");
        assertFalse(reader.table("todos").containsKey("pipelined"), "the pipelined round's push was not applied");
    }
}
