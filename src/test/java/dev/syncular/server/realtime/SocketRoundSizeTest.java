package dev.syncular.server.realtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.MessageDecoder;
import dev.syncular.server.wire.PushResult;
import dev.syncular.server.wire.RespHeader;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * §8.7 socket rounds as large as {@code POST /sync} bodies ({@code syncular.max-request-bytes}, 16 MiB here): a
 * round of 100 KB or 1 MiB sent as ONE WebSocket message — in one frame, as browsers send, or fragmented into
 * 32 KiB frames (RFC 6455 §5.4) — is answered like any round, and the connection carries the next one. The watch
 * socket (REMOTE.md §6) answers a 100 KB message, whole or fragmented, {@code operation.invalid_request}
 * (docs/OPERATIONS.md: above {@code syncular.operations.watch.max-message-bytes}, 64 KiB) and stays open. The cap
 * itself, and past it: {@link SocketRoundCapTest}.
 */
@QuarkusTest
class SocketRoundSizeTest {
    static final ObjectMapper JSON = new ObjectMapper();
    /** A watch of an operation this app does not register: answered {@code watch_error operation.unknown}. */
    static final String WATCH = "{\"t\":\"object\",\"v\":[[\"revision\",{\"t\":\"number\",\"v\":1}],"
            + "[\"kind\",{\"t\":\"string\",\"v\":\"watch\"}],[\"watchId\",{\"t\":\"string\",\"v\":\"w\"}],"
            + "[\"clientId\",{\"t\":\"string\",\"v\":\"c\"}],[\"operationId\",{\"t\":\"string\",\"v\":\"sha256:00/q\"}],"
            + "[\"params\",{\"t\":\"object\",\"v\":[]}]]}";

    @TestHTTPResource("/")
    URI base;

    @Inject
    SchemaWindow window;

    final String partition = "size-" + UUID.randomUUID();

    SyncTestClient client(String actor) {
        SyncTestClient c =
                SyncTestClient.onListL1(window.current(), new HttpTransport(base.toString(), partition), actor);
        c.syncUntilIdle(); // a client pushes once it knows the partition's log epoch (§2.1)
        return c;
    }

    /** A push+pull request of exactly {@code size} bytes: one row whose title fills it (its commit replaces any). */
    static byte[] requestOfSize(SyncTestClient c, int size) {
        int title = Math.max(1, size - 300);
        StringBuilder tried = new StringBuilder();
        for (int i = 0; i < 20; i++) {
            c.outbox.clear();
            c.upsert(
                    "todos",
                    Map.of(
                            "id",
                            "big-" + UUID.randomUUID(),
                            "list_id",
                            "l1",
                            "title",
                            "x".repeat(title),
                            "done",
                            false,
                            "position",
                            1L,
                            "updated_at_ms",
                            1L),
                    null);
            byte[] request = c.buildRequest().encode();
            if (request.length == size) {
                return request;
            }
            tried.append(' ').append(title).append("->").append(request.length);
            title += size - request.length;
        }
        throw new IllegalStateException("no request of " + size + " bytes:" + tried);
    }

    /** The round's push result, which must be applied. */
    static PushResult applied(byte[] response) {
        for (Frame f : MessageDecoder.decodeResponse(response).frames()) {
            if (f instanceof PushResult r) {
                assertTrue(SyncTestClient.applied(r), r.toString());
                return r;
            }
        }
        throw new AssertionError("no PUSH_RESULT in the round's response");
    }

    /** Opens the watch socket as {@code actor} (dev header authentication). */
    static RealtimeSocket watchSocket(URI base, String partition) {
        return RealtimeSocket.connect(
                URI.create(base.toString().replaceFirst("^http", "ws") + "operations/realtime"),
                Map.of("x-actor-id", "alice", "x-syncular-partition", partition));
    }

    /** Sends {@code bytes} as one binary message, in frames of {@code fragment} bytes when above 0. */
    static void sendBinary(RealtimeSocket s, byte[] bytes, int fragment) {
        int frame = fragment > 0 ? fragment : bytes.length;
        for (int off = 0; off < bytes.length; off += frame) {
            int n = Math.min(frame, bytes.length - off);
            s.ws.sendBinary(ByteBuffer.wrap(bytes, off, n), off + n == bytes.length)
                    .join();
        }
    }

    /** The next binary answer of the watch socket, as JSON text. */
    static String nextAnswer(RealtimeSocket s) throws InterruptedException {
        byte[] b = s.binaries.poll(RealtimeSocket.WAIT.toSeconds(), TimeUnit.SECONDS);
        assertNotNull(b, "no answer; closed " + s.closed.isDone() + " " + s.closeReason());
        return new String(b, StandardCharsets.UTF_8);
    }

    /** Docs/OPERATIONS.md: a message above the cap is the §5 {@code kind: "error"} {@code operation.invalid_request}. */
    static void assertInvalidRequest(String answer) throws Exception {
        JsonNode n = JSON.readTree(answer);
        assertTrue(
                answer.contains("\"operation.invalid_request\"") && answer.contains("\"error\""),
                "not operation.invalid_request: " + n);
    }

    /** The socket is still served: a watch of an unregistered operation is answered {@code operation.unknown}. */
    static void stillServed(RealtimeSocket s) throws Exception {
        s.ws.sendBinary(ByteBuffer.wrap(WATCH.getBytes(StandardCharsets.UTF_8)), true)
                .join();
        String answer = nextAnswer(s);
        assertTrue(answer.contains("\"operation.unknown\""), answer);
    }

    @Test
    void roundsOf100KbAnd1MibAreAnsweredAsOneMessageWholeOrFragmented() throws Exception {
        for (int size : new int[] {100_000, 1 << 20}) {
            for (int fragment : new int[] {0, 32 * 1024}) {
                String what = size + " bytes, " + (fragment == 0 ? "one frame" : "32 KiB fragments");
                SyncTestClient c = client("alice");
                RealtimeSocket s = RealtimeSocket.connect(base.toString(), partition, c.actorId, c.clientId);
                s.nextEvent("hello");
                byte[] request = requestOfSize(c, size);
                assertEquals(size, request.length);
                PushResult r = applied(s.roundAsOneMessage(request, fragment));
                assertNotNull(r.commitSeq(), what);
                // the connection carries the next round, and the row is there
                c.outbox.clear();
                byte[] next = s.roundAsOneMessage(c.buildRequest().encode(), 0);
                assertInstanceOf(
                        RespHeader.class,
                        MessageDecoder.decodeResponse(next).frames().get(0),
                        what);
                assertFalse(s.closed.isDone(), what + ": " + s.closeReason());
                s.ws.abort();
            }
        }
    }

    @Test
    void aWatchMessageOf100KbIsInvalidRequestWholeOrFragmentedAndTheSocketStays() throws Exception {
        byte[] big = new byte[100_000];
        Arrays.fill(big, (byte) ' ');
        for (int fragment : new int[] {0, 32 * 1024}) {
            RealtimeSocket s = watchSocket(base, partition);
            sendBinary(s, big, fragment);
            assertInvalidRequest(nextAnswer(s));
            stillServed(s);
            assertFalse(s.closed.isDone(), s.closeReason());
            s.ws.abort();
        }
    }

    /** Sends {@code bytes} and tolerates the server closing the socket before the last frame left. */
    static void sendTolerant(Runnable send) {
        try {
            send.run();
        } catch (CompletionException e) {
            // the server answered with a close while the frames were still leaving
        }
    }

    static Message decode(byte[] response) {
        return MessageDecoder.decodeResponse(response);
    }
}
