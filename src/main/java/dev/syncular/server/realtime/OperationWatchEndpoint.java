package dev.syncular.server.realtime;

import dev.syncular.server.operations.QueryWatches;
import dev.syncular.server.operations.WatchSession;
import dev.syncular.server.sync.SyncRequestContext;
import io.quarkus.websockets.next.OnBinaryMessage;
import io.quarkus.websockets.next.OnClose;
import io.quarkus.websockets.next.OnError;
import io.quarkus.websockets.next.OnOpen;
import io.quarkus.websockets.next.OnPongMessage;
import io.quarkus.websockets.next.OnTextMessage;
import io.quarkus.websockets.next.UserData;
import io.quarkus.websockets.next.WebSocket;
import io.quarkus.websockets.next.WebSocketConnection;
import io.smallrye.mutiny.Uni;
import io.vertx.core.buffer.Buffer;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import org.jboss.logging.Logger;

/**
 * The REMOTE.md §6 watch socket at {@code <mount>/operations/realtime} (authenticated by
 * {@link OperationWatchUpgrade}): binary and text messages both carry the UTF-8 JSON of §4 (Syncular's web
 * client sends binary), each answered in the framing of the message it answers — a watch's snapshots in the
 * framing of its {@code watch}. The messages are handled in arrival order ({@link WatchSession}); closing
 * removes every watch of the connection. Heartbeats, reaping and the credential's lifetime:
 * {@link PodOperationWatches}.
 */
@WebSocket(path = OperationWatchUpgrade.ENDPOINT_PATH, endpointId = OperationWatchUpgrade.ENDPOINT_ID)
public class OperationWatchEndpoint {
    private static final Logger LOG = Logger.getLogger(OperationWatchEndpoint.class);
    private static final UserData.TypedKey<WatchSession> SESSION =
            new UserData.TypedKey<>("syncular.operations.watch.session");

    @Inject
    QueryWatches watches;

    @Inject
    PodOperationWatches pod;

    /** On the connection's event loop (a {@code Uni}), so it is done before the first message is handled. */
    @OnOpen
    public Uni<Void> open(WebSocketConnection connection) {
        SyncRequestContext ctx = connection.userData().get(OperationWatchUpgrade.CONTEXT);
        pod.opened(connection, ctx);
        OutboundBudget budget = pod.outbound(connection);
        WatchSession session = watches.open(ctx, (bytes, binary) -> {
            // bounded as on the sync socket: past the budget the stuck deadline starts; a message that would take
            // the buffer past twice the budget closes the socket (4290) — the client reconnects and watches again,
            // a fresh snapshot being a full replacement (§6)
            long n = bytes.length;
            if (!budget.bearable(n)) {
                budget.closeStuck();
                return;
            }
            if (!budget.fits(n)) {
                budget.refused();
            }
            budget.send(
                    binary
                            ? connection.sendBinary(Buffer.buffer(bytes))
                            : connection.sendText(new String(bytes, StandardCharsets.UTF_8)),
                    n,
                    e -> LOG.debugf("watch message not sent: %s", e.toString()));
        });
        connection.userData().put(SESSION, session);
        return Uni.createFrom().voidItem();
    }

    @OnBinaryMessage
    public Uni<Void> binary(WebSocketConnection connection, Buffer message) {
        return handle(connection, message.getBytes(), true);
    }

    @OnTextMessage
    public Uni<Void> text(WebSocketConnection connection, String message) {
        return handle(connection, message.getBytes(StandardCharsets.UTF_8), false);
    }

    @OnPongMessage
    public Uni<Void> pong(WebSocketConnection connection, Buffer data) {
        pod.heard(connection);
        return Uni.createFrom().voidItem();
    }

    private Uni<Void> handle(WebSocketConnection connection, byte[] message, boolean binary) {
        WatchSession session = connection.userData().get(SESSION);
        if (session == null) {
            return Uni.createFrom().voidItem(); // closed meanwhile
        }
        pod.heard(connection);
        if (pod.expired(connection, connection.userData().get(OperationWatchUpgrade.CONTEXT))) {
            return Uni.createFrom().voidItem(); // no watch runs on an expired credential
        }
        // on the connection's event loop, in arrival order (an unwatch is never handled before its watch): the
        // session only decodes (at most max-message-bytes) and registers; runs go to worker threads (WatchRuns)
        session.receive(message, binary);
        return Uni.createFrom().voidItem();
    }

    /**
     * An error of the connection itself (a reset by the peer, mostly): logged, not rethrown. A message the transport
     * dropped for its size ({@link SocketMessageLimits#overflowed}) is answered {@code operation.invalid_request}
     * like any message above {@code syncular.operations.watch.max-message-bytes}; the socket stays.
     */
    @OnError
    public Uni<Void> error(WebSocketConnection connection, Throwable error) {
        WatchSession session = connection.userData().get(SESSION);
        if (SocketMessageLimits.overflowed(error) && session != null) {
            pod.heard(connection);
            session.tooLarge(!SocketMessageLimits.overflowedText(error));
            return Uni.createFrom().voidItem();
        }
        LOG.debugf("operations watch socket error: %s", error.toString());
        return Uni.createFrom().voidItem();
    }

    @OnClose
    public Uni<Void> close(WebSocketConnection connection) {
        pod.closed(connection);
        WatchSession session = connection.userData().get(SESSION);
        if (session != null) {
            session.close();
        }
        return Uni.createFrom().voidItem();
    }
}
