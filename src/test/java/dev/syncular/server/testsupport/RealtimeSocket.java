package dev.syncular.server.testsupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.MessageDecoder;
import dev.syncular.server.wire.realtime.ControlMessage;
import dev.syncular.server.wire.realtime.ControlMessages;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A client end of the §8 realtime channel over the JDK WebSocket client: it queues every text (control) and
 * binary (tagged) message it receives, and speaks the client side of §8.2 (acks) and §8.7 (rounds in
 * {@code 0x01} chunks).
 */
public final class RealtimeSocket implements WebSocket.Listener {
    public static final Duration WAIT = Duration.ofSeconds(30);
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    public final BlockingQueue<String> texts = new LinkedBlockingQueue<>();
    public final BlockingQueue<byte[]> binaries = new LinkedBlockingQueue<>();
    /** The {@code 0x00} deltas {@link #round} found while waiting for its response chunks, in arrival order. */
    public final BlockingQueue<byte[]> deltasBesideRounds = new LinkedBlockingQueue<>();
    /**
     * Every message in arrival order, text and binary together, for a socket opened with {@link #connectInOrder}
     * (then {@link #texts} and {@link #binaries} stay empty); {@code null} otherwise.
     */
    public final BlockingQueue<Received> inOrder;

    /** One received message: a text ({@link #text} set) or a binary one ({@link #binary} set). */
    public record Received(String text, byte[] binary) {
        public boolean isText() {
            return text != null;
        }
    }
    /** Completes with the close code (-1 on an error) when the connection ends. */
    public final CompletableFuture<Integer> closed = new CompletableFuture<>();
    /** The close frame's reason, or the error, once {@link #closed} completed. */
    private volatile String closeReason;
    /** While set, the client reads nothing from the socket (a consumer that stopped reading). */
    private volatile boolean paused;

    private RealtimeSocket(boolean inOrder) {
        this.inOrder = inOrder ? new LinkedBlockingQueue<>() : null;
    }

    /** A listener not opened yet (a test that opens the socket itself). */
    public RealtimeSocket() {
        this(false);
    }

    private final StringBuilder text = new StringBuilder();
    private final ByteArrayOutputStream binary = new ByteArrayOutputStream();
    public WebSocket ws;

    /**
     * Opens {@code <base>realtime?clientId=…} ({@code base} ends with a slash) with dev header authentication
     * as {@code actor} in {@code partition}.
     */
    public static RealtimeSocket connect(String base, String partition, String actor, String clientId) {
        return connect(
                URI.create(base.replaceFirst("^http", "ws") + "realtime?clientId=" + clientId),
                Map.of("x-actor-id", actor, "x-syncular-partition", partition));
    }

    /** As {@link #connect(String, String, String, String)}, every message queued in {@link #inOrder}. */
    public static RealtimeSocket connectInOrder(String base, String partition, String actor, String clientId) {
        return open(
                new RealtimeSocket(true),
                URI.create(base.replaceFirst("^http", "ws") + "realtime?clientId=" + clientId),
                Map.of("x-actor-id", actor, "x-syncular-partition", partition));
    }

    /** As {@link #connect(String, String, String, String)}, but reading nothing until {@link #resume()}. */
    public static RealtimeSocket connectPaused(String base, String partition, String actor, String clientId) {
        RealtimeSocket s = new RealtimeSocket();
        s.paused = true;
        return open(
                s,
                URI.create(base.replaceFirst("^http", "ws") + "realtime?clientId=" + clientId),
                Map.of("x-actor-id", actor, "x-syncular-partition", partition));
    }

    /** As {@link #connect(URI, Map)}, but reading nothing until {@link #resume()}. */
    public static RealtimeSocket connectPaused(URI uri, Map<String, String> headers) {
        RealtimeSocket s = new RealtimeSocket();
        s.paused = true;
        return open(s, uri, headers);
    }

    /** Starts reading (after {@link #connectPaused}). */
    public void resume() {
        paused = false;
        ws.request(1);
    }

    @Override
    public void onOpen(WebSocket webSocket) {
        if (!paused) {
            webSocket.request(1);
        }
    }

    /** Opens {@code uri} with {@code headers}. */
    public static RealtimeSocket connect(URI uri, Map<String, String> headers) {
        return connectAsync(uri, headers).join();
    }

    /** Starts opening {@code uri} with {@code headers} (for many sockets at once). */
    public static CompletableFuture<RealtimeSocket> connectAsync(URI uri, Map<String, String> headers) {
        return openAsync(new RealtimeSocket(), uri, headers);
    }

    private static RealtimeSocket open(RealtimeSocket s, URI uri, Map<String, String> headers) {
        return openAsync(s, uri, headers).join();
    }

    private static CompletableFuture<RealtimeSocket> openAsync(RealtimeSocket s, URI uri, Map<String, String> headers) {
        WebSocket.Builder b = HTTP.newWebSocketBuilder();
        headers.forEach(b::header);
        return b.buildAsync(uri, s)
                .orTimeout(WAIT.toSeconds(), TimeUnit.SECONDS)
                .thenApply(ws -> {
                    s.ws = ws;
                    return s;
                });
    }

    /** The close frame's reason (or the error) once {@link #closed} completed, else {@code null}. */
    public String closeReason() {
        return closeReason;
    }

    @Override
    public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
        closeReason = reason;
        closed.complete(statusCode);
        return null;
    }

    @Override
    public void onError(WebSocket webSocket, Throwable error) {
        closeReason = String.valueOf(error);
        closed.complete(-1);
    }

    @Override
    public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
        text.append(data);
        if (last) {
            if (inOrder != null) {
                inOrder.add(new Received(text.toString(), null));
            } else {
                texts.add(text.toString());
            }
            text.setLength(0);
        }
        if (!paused) {
            webSocket.request(1);
        }
        return null;
    }

    @Override
    public CompletionStage<?> onBinary(WebSocket webSocket, ByteBuffer data, boolean last) {
        byte[] b = new byte[data.remaining()];
        data.get(b);
        binary.writeBytes(b);
        if (last) {
            if (inOrder != null) {
                inOrder.add(new Received(null, binary.toByteArray()));
            } else {
                binaries.add(binary.toByteArray());
            }
            binary.reset();
        }
        if (!paused) {
            webSocket.request(1);
        }
        return null;
    }

    /** §8.7: sends {@code request} as 0x01 chunks of {@code chunk} bytes and reassembles the 0x01 response. */
    public byte[] round(byte[] request, int chunk) throws InterruptedException {
        sendMessages(request, chunk);
        return response();
    }

    /** Sends {@code request} as {@code 0x01} messages of {@code chunk} bytes each (§8.7: boundaries carry no meaning). */
    public void sendMessages(byte[] request, int chunk) {
        for (int off = 0; off < request.length; off += chunk) {
            int n = Math.min(chunk, request.length - off);
            ByteBuffer b = ByteBuffer.allocate(n + 1)
                    .put((byte) 0x01)
                    .put(request, off, n)
                    .flip();
            ws.sendBinary(b, true).join();
        }
    }

    /**
     * §8.7: sends {@code request} as ONE {@code 0x01} message — one frame, or with {@code fragmentBytes > 0} in
     * frames of that many bytes (RFC 6455 §5.4 fragmentation: the first frame carries the tag, continuation frames
     * follow) — and reassembles the 0x01 response.
     */
    public byte[] roundAsOneMessage(byte[] request, int fragmentBytes) throws InterruptedException {
        sendOneMessage(request, fragmentBytes);
        return response();
    }

    /** Sends {@code request} with its {@code 0x01} tag as one message, in frames of {@code fragmentBytes} if > 0. */
    public void sendOneMessage(byte[] request, int fragmentBytes) {
        byte[] tagged = new byte[request.length + 1];
        tagged[0] = 0x01;
        System.arraycopy(request, 0, tagged, 1, request.length);
        int frame = fragmentBytes > 0 ? fragmentBytes : tagged.length;
        for (int off = 0; off < tagged.length; off += frame) {
            int n = Math.min(frame, tagged.length - off);
            ws.sendBinary(ByteBuffer.wrap(tagged, off, n), off + n == tagged.length)
                    .join();
        }
    }

    /** The 0x01 chunks of a round's response, reassembled (deltas meanwhile go to {@link #deltasBesideRounds}). */
    public byte[] response() throws InterruptedException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        MessageDecoder d = MessageDecoder.forResponses();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!d.isComplete()) {
            byte[] m = binaries.poll(200, TimeUnit.MILLISECONDS);
            if (m == null) {
                if (closed.isDone() && binaries.isEmpty()) {
                    throw new AssertionError(
                            "the socket closed during a round, close code " + closed.join() + " (" + closeReason + ")");
                }
                if (ws.isInputClosed() && binaries.isEmpty()) {
                    // aborted (WebSocket#abort tells no listener): nothing more can arrive
                    throw new AssertionError("the socket was aborted during a round");
                }
                assertTrue(System.nanoTime() < deadline, "no round response chunk");
                continue;
            }
            if (m[0] != 0x01) {
                deltasBesideRounds.add(m); // a delta interleaved between rounds
                continue;
            }
            out.write(m, 1, m.length - 1);
            d.feed(m, 1, m.length - 1);
        }
        return out.toByteArray();
    }

    /** The next control message whose {@code event} is {@code event}, skipping others; fails after {@link #WAIT}. */
    public JsonNode nextEvent(String event) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            String t = texts.poll(1, TimeUnit.SECONDS);
            if (t != null) {
                JsonNode n = ControlMessages.readTree(t);
                if (event.equals(n.path("event").asText())) {
                    return n;
                }
            }
        }
        throw new AssertionError("no " + event + " event");
    }

    /** The next binary message, which must be a {@code 0x00} delta, decoded. */
    public Message nextDelta() throws InterruptedException {
        byte[] b = binaries.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertNotNull(b, "no delta");
        assertEquals(0x00, b[0]);
        return MessageDecoder.decodeResponse(Arrays.copyOfRange(b, 1, b.length));
    }

    /** §8.2 ack of {@code cursor}. */
    public void ack(long cursor) {
        send(new ControlMessage.Ack(cursor));
    }

    public void send(ControlMessage message) {
        ws.sendText(ControlMessages.render(message), true).join();
    }

    /** A text frame as it is (malformed or unknown events). */
    public void sendText(String raw) {
        ws.sendText(raw, true).join();
    }
}
