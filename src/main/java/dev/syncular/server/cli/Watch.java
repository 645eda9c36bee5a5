package dev.syncular.server.cli;

import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.DebugJson;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.MessageDecoder;
import dev.syncular.server.wire.realtime.ChannelTag;
import dev.syncular.server.wire.realtime.ControlMessage;
import dev.syncular.server.wire.realtime.ControlMessages;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * {@code watch}: the realtime channel (§8) from the command line. One pull round first (it records the
 * subscriptions and cursors the server fans deltas out for, §8.2), then the socket {@code <url>/realtime?clientId=…}
 * with the CLI's headers. Every text message (§8.1 control: {@code hello}, {@code sync} wake-ups, heartbeats,
 * presence) is printed as it arrives; every {@code 0x00} delta is printed as its §11.1 debug JSON, applied to the
 * state file like a pull (with {@code --decode} its changes with values) and acknowledged with its highest commit
 * sequence. A wake-up runs a pull round. Ends when the server closes the socket, or after {@code --count} deltas.
 *
 * <p>Messages are handled on the calling thread, one at a time, in arrival order; the WebSocket listener only
 * queues them.
 */
final class Watch {
    private static final Object CLOSED = new Object();

    private final CliOptions options;
    private final SyncRounds rounds;
    private final ClientState state;
    private final PrintStream out;
    private final BlockingQueue<Object> inbox = new LinkedBlockingQueue<>();

    Watch(CliOptions options, SyncRounds rounds, ClientState state, PrintStream out) {
        this.options = options;
        this.rounds = rounds;
        this.state = state;
        this.out = out;
    }

    void run(Collection<Subscription> subs) throws IOException {
        rounds.pull(subs);
        WebSocket.Builder builder = HttpClient.newHttpClient().newWebSocketBuilder();
        for (Map.Entry<String, String> h : options.headers.entrySet()) {
            builder.header(h.getKey(), h.getValue());
        }
        WebSocket ws;
        try {
            ws = builder.buildAsync(realtimeUri(options.url, state.clientId), new Listener())
                    .join();
        } catch (CompletionException e) {
            throw new IllegalStateException(
                    "the realtime socket did not open: " + e.getCause().getMessage());
        }
        int deltas = 0;
        try {
            while (true) {
                Object next = inbox.take();
                if (next == CLOSED) {
                    return;
                }
                if (next instanceof String text) {
                    out.println(text);
                    if (ControlMessages.parseServerMessage(text) instanceof ControlMessage.Wake) {
                        rounds.pull(subs);
                    }
                } else if (next instanceof byte[] bytes && bytes.length > 0 && (bytes[0] & 0xff) == ChannelTag.DELTA) {
                    Message delta = MessageDecoder.decodeResponse(Arrays.copyOfRange(bytes, 1, bytes.length));
                    out.println(DebugJson.toText(DebugJson.render(delta)));
                    rounds.applyDelta(delta);
                    long cursor = highestCommitSeq(delta);
                    if (cursor >= 0) {
                        ws.sendText(ControlMessages.render(new ControlMessage.Ack(cursor)), true)
                                .join();
                    }
                    deltas++;
                    if (options.count > 0 && deltas >= options.count) {
                        ws.sendClose(WebSocket.NORMAL_CLOSURE, "done").join();
                        return;
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            ws.abort();
        }
    }

    /** {@code http(s)://host/mount} → {@code ws(s)://host/mount/realtime?clientId=<id>}. */
    static URI realtimeUri(String url, String clientId) {
        String base = url.replaceFirst("^http", "ws");
        while (base.endsWith("/")) {
            base = base.substring(0, base.length() - 1);
        }
        return URI.create(base + "/realtime?clientId=" + URLEncoder.encode(clientId, StandardCharsets.UTF_8));
    }

    private static long highestCommitSeq(Message delta) {
        long max = -1;
        for (Frame f : delta.frames()) {
            if (f instanceof CommitFrame c) {
                max = Math.max(max, c.commitSeq());
            }
        }
        return max;
    }

    /** Reassembles fragmented messages and queues whole ones for {@link #run}. */
    private final class Listener implements WebSocket.Listener {
        private final StringBuilder text = new StringBuilder();
        private final ByteArrayOutputStream binary = new ByteArrayOutputStream();

        @Override
        public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
            text.append(data);
            if (last) {
                inbox.add(text.toString());
                text.setLength(0);
            }
            ws.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onBinary(WebSocket ws, ByteBuffer data, boolean last) {
            byte[] chunk = new byte[data.remaining()];
            data.get(chunk);
            binary.writeBytes(chunk);
            if (last) {
                inbox.add(binary.toByteArray());
                binary.reset();
            }
            ws.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket ws, int statusCode, String reason) {
            inbox.add("{\"closed\":" + statusCode + "}");
            inbox.add(CLOSED);
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public void onError(WebSocket ws, Throwable error) {
            inbox.add(CLOSED);
        }
    }
}
