package dev.syncular.server.realtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.cli.HttpFailure;
import dev.syncular.server.memory.BufferBudget;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.QuickstartAdminProfile;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.ErrorFrame;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.MessageDecoder;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.net.URI;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * §8.7 socket rounds at the cap, with a small one ({@code syncular.max-request-bytes=256K}, a 1 MiB buffer budget,
 * both set by {@link QuickstartAdminProfile}) so the rounds past it stay quick. A round of exactly the cap is answered
 * as {@code POST /sync} answers the same body, however it is sent: one message in one frame, one message in 32 KiB
 * fragments, or several messages. One byte more — past what HTTP answers 413 — closes the socket with 1009 (message
 * too big) and the reason {@code sync.invalid_request: sync round exceeds 262144 bytes}, never a silent drop
 * ({@link SocketRound.Outcome#TOO_LARGE} says why a close and not an in-band error). A round counts in the pod's
 * buffer budget: with the budget held by other rounds it is answered in-band {@code sync.rate_limited} and the socket
 * stays. A control message past its cap closes with 1009 too; a watch-socket message past what the transport holds
 * is answered {@code operation.invalid_request}, the socket staying open.
 */
@QuarkusTest
@OwnApp
@TestProfile(QuickstartAdminProfile.class)
class SocketRoundCapTest {
    static final int CAP = 256 * 1024;
    static final String TOO_LARGE = "sync.invalid_request: sync round exceeds " + CAP + " bytes";

    @TestHTTPResource("/")
    URI base;

    @Inject
    SchemaWindow window;

    @Inject
    BufferBudget budget;

    final String partition = "cap-" + UUID.randomUUID();

    SyncTestClient client(String actor) {
        SyncTestClient c =
                SyncTestClient.onListL1(window.current(), new HttpTransport(base.toString(), partition), actor);
        c.syncUntilIdle(); // a client pushes once it knows the partition's log epoch (§2.1)
        return c;
    }

    RealtimeSocket connect(SyncTestClient c) throws InterruptedException {
        RealtimeSocket s = RealtimeSocket.connect(base.toString(), partition, c.actorId, c.clientId);
        s.nextEvent("hello");
        return s;
    }

    /** How a round's bytes are sent. */
    enum Framing {
        ONE_FRAME,
        FRAGMENTS,
        MESSAGES
    }

    static void send(RealtimeSocket s, byte[] request, Framing framing) {
        switch (framing) {
            case ONE_FRAME -> s.sendOneMessage(request, 0);
            case FRAGMENTS -> s.sendOneMessage(request, 32 * 1024);
            case MESSAGES -> s.sendMessages(request, 64 * 1024);
        }
    }

    @Test
    void aRoundOfTheCapIsAnsweredAndOneByteMoreClosesWith1009() throws Exception {
        for (Framing framing : Framing.values()) {
            SyncTestClient c = client("alice");
            RealtimeSocket s = connect(c);
            send(s, SocketRoundSizeTest.requestOfSize(c, CAP), framing);
            assertNotNull(SocketRoundSizeTest.applied(s.response()).commitSeq(), framing.name());
            assertFalse(s.closed.isDone(), framing + ": " + s.closeReason());

            byte[] over = SocketRoundSizeTest.requestOfSize(c, CAP + 1);
            SocketRoundSizeTest.sendTolerant(() -> send(s, over, framing));
            assertEquals(
                    SocketMessageLimits.MESSAGE_TOO_BIG,
                    s.closed.get(RealtimeSocket.WAIT.toSeconds(), TimeUnit.SECONDS),
                    framing + ": " + s.closeReason());
            assertEquals(TOO_LARGE, s.closeReason(), framing.name());
            assertTrue(s.binaries.isEmpty(), framing + ": nothing of the over-cap round was answered");
        }
        // the same bodies over HTTP: the cap passes, one byte more is 413 sync.invalid_request
        SyncTestClient h = client("bob");
        HttpTransport http = new HttpTransport(base.toString(), partition);
        SocketRoundSizeTest.applied(http.roundTrip(h, SocketRoundSizeTest.requestOfSize(h, CAP)));
        HttpFailure refused =
                assertThrows(HttpFailure.class, () -> http.roundTrip(h, SocketRoundSizeTest.requestOfSize(h, CAP + 1)));
        assertEquals(413, refused.status);
        assertTrue(refused.body.contains("sync.invalid_request"), refused.body);
    }

    /**
     * Two rounds arriving in several messages hold 2 × 200 KiB of the 1 MiB budget (§8.7 bytes counted as they
     * arrive), and as much again for the decoder's buffers of their partial frames; a third round of 200 KB sent as one message does not fit: it is answered in-band
     * {@code sync.rate_limited} (RESP_HEADER, ERROR, END) and its socket stays. Once the two held rounds' sockets are
     * gone, the same round is answered.
     */
    @Test
    void aRoundAsOneMessageCountsInThePodsBufferBudget() throws Exception {
        long before = budget.inUse();
        RealtimeSocket[] holders = new RealtimeSocket[2];
        for (int i = 0; i < holders.length; i++) {
            SyncTestClient h = client("holder" + i);
            holders[i] = connect(h);
            byte[] request = SocketRoundSizeTest.requestOfSize(h, 250_000);
            holders[i].sendMessages(Arrays.copyOf(request, 200 * 1024), 50 * 1024); // no END yet: held
        }
        long deadline = System.nanoTime() + RealtimeSocket.WAIT.toNanos();
        // each holder: its 200 KiB, and the buffer of its partial frame (all but the frames before it)
        while (budget.inUse() < before + 2 * (200 + 190) * 1024) {
            assertTrue(System.nanoTime() < deadline, "the held rounds are not counted: " + budget.inUse());
            Thread.onSpinWait();
        }
        SyncTestClient c = client("carol");
        RealtimeSocket s = connect(c);
        byte[] request = SocketRoundSizeTest.requestOfSize(c, 200_000);
        List<Frame> refused =
                MessageDecoder.decodeResponse(s.roundAsOneMessage(request, 0)).frames();
        assertEquals(2, refused.size(), refused.toString());
        assertEquals(
                "sync.rate_limited",
                assertInstanceOf(ErrorFrame.class, refused.get(1)).code());
        assertFalse(s.closed.isDone(), s.closeReason());
        for (RealtimeSocket h : holders) {
            h.ws.abort();
        }
        deadline = System.nanoTime() + RealtimeSocket.WAIT.toNanos();
        while (budget.inUse() > before) {
            assertTrue(System.nanoTime() < deadline, "the closed sockets' bytes are not given back");
            Thread.onSpinWait();
        }
        assertNotNull(
                SocketRoundSizeTest.applied(s.roundAsOneMessage(request, 0)).commitSeq());
        s.ws.abort();
    }

    /**
     * §8.1 control messages: one of more than 262144 characters closes the socket with 1009 and its reason — read
     * and refused before it is parsed, or dropped by the transport when it is larger than any message it holds.
     */
    @Test
    void aControlMessagePastItsCapClosesWith1009() throws Exception {
        // CAP + 1 characters: within what the transport holds (the round cap and its tag byte), past the control cap
        for (int length : new int[] {CAP + 1, 300_000}) {
            SyncTestClient c = client("dave");
            RealtimeSocket s = connect(c);
            String head = "{\"type\":\"ack\",\"cursor\":1,\"pad\":\"";
            String huge = head + "p".repeat(length - head.length() - 2) + "\"}";
            assertEquals(length, huge.length());
            SocketRoundSizeTest.sendTolerant(() -> s.ws.sendText(huge, true).join());
            assertEquals(
                    SocketMessageLimits.MESSAGE_TOO_BIG,
                    s.closed.get(RealtimeSocket.WAIT.toSeconds(), TimeUnit.SECONDS),
                    length + ": " + s.closeReason());
            assertEquals("control message exceeds 262144 characters", s.closeReason());
        }
    }

    /**
     * The watch socket (docs/OPERATIONS.md): a message larger than any the transport holds (more than the round cap
     * and its tag byte), in one frame or fragmented, is answered {@code operation.invalid_request} as one above
     * {@code syncular.operations.watch.max-message-bytes} is, and the socket goes on.
     */
    @Test
    void aWatchMessagePastWhatTheTransportHoldsIsInvalidRequestAndTheSocketStays() throws Exception {
        byte[] huge = new byte[300_000];
        Arrays.fill(huge, (byte) ' ');
        for (int fragment : new int[] {0, 32 * 1024}) {
            RealtimeSocket s = SocketRoundSizeTest.watchSocket(base, partition);
            SocketRoundSizeTest.sendBinary(s, huge, fragment);
            SocketRoundSizeTest.assertInvalidRequest(SocketRoundSizeTest.nextAnswer(s));
            SocketRoundSizeTest.stillServed(s);
            assertFalse(s.closed.isDone(), s.closeReason());
            s.ws.abort();
        }
    }
}
