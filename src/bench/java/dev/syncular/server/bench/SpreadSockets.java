package dev.syncular.server.bench;

import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.ClientWebSocket;
import io.vertx.core.http.UpgradeRejectedException;
import io.vertx.core.http.WebSocket;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import io.vertx.core.http.WebSocketConnectOptions;
import java.net.URI;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntFunction;

/**
 * Many realtime sockets (§8.1) of one benchmark, opened with Vert.x's WebSocket client over a few event loops and
 * spread over loopback source addresses: one source address reaches one server port from at most
 * {@code net.ipv4.ip_local_port_range} ephemeral ports (28,232 by default), so {@code bench.socketsPerAddress}
 * (20,000) sockets go out from 127.0.0.2, the next from 127.0.0.3, and so on (Linux answers the whole of
 * 127.0.0.0/8 on the loopback interface without setup). Every set takes addresses no earlier set of this JVM
 * used, so the ports an earlier phase left in {@code TIME_WAIT} are not in the way. Pings are answered by the
 * client (Vert.x replies to every ping with a pong), so idle sockets outlive the server's heartbeat (§8.5).
 */
final class SpreadSockets implements AutoCloseable {
    /** Sockets per loopback source address. */
    static final int PER_ADDRESS = Integer.getInteger("bench.socketsPerAddress", 20_000);
    /** Upgrades in flight at once. */
    private static final int HANDSHAKES = Integer.getInteger("bench.handshakes", 200);
    /** The next source address (127.0.0.2 first), over every set this JVM opens. */
    private static final AtomicInteger NEXT_ADDRESS = new AtomicInteger(2);

    /** What a socket receives; called on the socket's event loop. */
    interface Listener {
        void text(int index, WebSocket socket, String text);

        /** A whole binary message and the {@link System#nanoTime()} its handler started at. */
        default void binary(int index, WebSocket socket, byte[] message, long nanos) {}
    }

    private final Vertx vertx;
    private final List<WebSocketClient> clients = new ArrayList<>();
    /** The source addresses used, in order. */
    final List<String> addresses = new ArrayList<>();
    /** The open sockets (a refused upgrade's index has none). */
    final List<WebSocket> sockets;
    /** Sockets the server closed after they opened. */
    final AtomicInteger closed = new AtomicInteger();
    /** Upgrades refused 429 ({@code sync.websocket_connection_limit}), when {@code open} was told to count them. */
    final AtomicInteger refused = new AtomicInteger();

    private SpreadSockets(int count) {
        vertx = Vertx.vertx(new VertxOptions()
                .setEventLoopPoolSize(Math.max(2, Runtime.getRuntime().availableProcessors()))
                .setBlockedThreadCheckInterval(10_000));
        sockets = new ArrayList<>(count);
    }

    /**
     * Opens {@code count} sockets to {@code <baseUrl>/realtime?clientId=<clientId(i)>} as {@code actor(i)} in
     * {@code partition}, {@code bench.handshakes} (200) upgrades at a time; returns once every upgrade answered 101
     * (the hellos arrive at {@code listener}). Fails on the first refused upgrade, unless {@code countRefusals}: then
     * an upgrade answered 429 is counted ({@link #refused}) and its index left without a socket.
     */
    static SpreadSockets open(
            String baseUrl,
            String partition,
            int count,
            IntFunction<String> actor,
            IntFunction<String> clientId,
            Listener listener,
            boolean countRefusals)
            throws InterruptedException {
        SpreadSockets set = new SpreadSockets(count);
        URI uri = URI.create(baseUrl);
        Semaphore inFlight = new Semaphore(HANDSHAKES);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        WebSocket[] opened = new WebSocket[count];
        WebSocketClient client = null;
        for (int i = 0; i < count && failure.get() == null; i++) {
            if (i % PER_ADDRESS == 0) {
                client = set.client();
            }
            inFlight.acquire();
            int index = i;
            ClientWebSocket ws = client.webSocket();
            // handlers before the connect: the hello may come in the same read as the 101
            ws.textMessageHandler(t -> listener.text(index, ws, t));
            ws.binaryMessageHandler(b -> listener.binary(index, ws, b.getBytes(), System.nanoTime()));
            ws.closeHandler(v -> set.closed.incrementAndGet());
            ws.connect(new WebSocketConnectOptions()
                            .setHost(uri.getHost())
                            .setPort(uri.getPort())
                            .setURI("/realtime?clientId=" + clientId.apply(i))
                            .addHeader("x-actor-id", actor.apply(i))
                            .addHeader("x-syncular-partition", partition))
                    .onComplete(r -> {
                        if (r.succeeded()) {
                            opened[index] = r.result();
                        } else if (countRefusals
                                && r.cause() instanceof UpgradeRejectedException u
                                && u.getStatus() == 429) {
                            set.refused.incrementAndGet();
                        } else {
                            failure.compareAndSet(null, r.cause());
                        }
                        inFlight.release();
                    });
        }
        if (!inFlight.tryAcquire(HANDSHAKES, 120, TimeUnit.SECONDS)) {
            failure.compareAndSet(null, new IllegalStateException("upgrades unanswered after 120 s"));
        }
        if (failure.get() != null) {
            set.close();
            long open = Arrays.stream(opened).filter(w -> w != null).count();
            throw new IllegalStateException(
                    "a socket did not open (" + open + " of " + count + " open)", failure.get());
        }
        for (WebSocket w : opened) {
            if (w != null) {
                set.sockets.add(w);
            }
        }
        return set;
    }

    /** A client bound to the next unused loopback source address. */
    private WebSocketClient client() {
        int n = NEXT_ADDRESS.getAndIncrement();
        String address = String.format(Locale.ROOT, "127.%d.%d.%d", (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff);
        addresses.add(address);
        WebSocketClient c = vertx.createWebSocketClient(new WebSocketClientOptions()
                .setLocalAddress(address)
                .setMaxConnections(PER_ADDRESS)
                .setConnectTimeout(60_000)
                .setMaxMessageSize(1 << 21)
                .setMaxFrameSize(1 << 21));
        clients.add(c);
        return c;
    }

    /** The source addresses as a range, e.g. {@code 127.0.0.2–127.0.0.6}. */
    String addressRange() {
        return addresses.isEmpty()
                ? "none"
                : addresses.size() == 1
                        ? addresses.get(0)
                        : addresses.get(0) + "–" + addresses.get(addresses.size() - 1);
    }

    @Override
    public void close() {
        try {
            vertx.close().toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
        } catch (Exception e) {
            System.out.println("note: closing the benchmark's sockets: " + e);
        }
    }
}
