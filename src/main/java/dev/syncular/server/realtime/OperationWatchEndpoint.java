package dev.syncular.server.realtime;

import dev.syncular.server.operations.QueryWatches;
import dev.syncular.server.operations.WatchSession;
import io.quarkus.websockets.next.OnBinaryMessage;
import io.quarkus.websockets.next.OnClose;
import io.quarkus.websockets.next.OnError;
import io.quarkus.websockets.next.OnOpen;
import io.quarkus.websockets.next.OnTextMessage;
import io.quarkus.websockets.next.UserData;
import io.quarkus.websockets.next.WebSocket;
import io.quarkus.websockets.next.WebSocketConnection;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import io.vertx.core.buffer.Buffer;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import org.jboss.logging.Logger;

/**
 * The REMOTE.md §6 watch socket at {@code <mount>/operations/realtime} (authenticated by
 * {@link OperationWatchUpgrade}): binary and text messages both carry the UTF-8 JSON of §4 (Syncular's web
 * client sends binary), each answered in the framing of the message it answers — a watch's snapshots in the
 * framing of its {@code watch}. The messages are handled on a worker thread ({@link WatchSession}); closing
 * removes every watch of the connection.
 */
@WebSocket(path = OperationWatchUpgrade.ENDPOINT_PATH, endpointId = OperationWatchUpgrade.ENDPOINT_ID)
public class OperationWatchEndpoint {
    private static final Logger LOG = Logger.getLogger(OperationWatchEndpoint.class);
    private static final UserData.TypedKey<WatchSession> SESSION = new UserData.TypedKey<>("syncular.operations.watch.session");

    @Inject
    QueryWatches watches;

    @OnOpen
    public void open(WebSocketConnection connection) {
        WatchSession session = watches.open(connection.userData().get(OperationWatchUpgrade.CONTEXT), (bytes, binary) -> {
            Uni<Void> sent = binary ? connection.sendBinary(Buffer.buffer(bytes))
                    : connection.sendText(new String(bytes, StandardCharsets.UTF_8));
            sent.subscribe().with(v -> { }, e -> LOG.debugf("watch message not sent: %s", e.toString()));
        });
        connection.userData().put(SESSION, session);
    }

    @OnBinaryMessage
    public Uni<Void> binary(WebSocketConnection connection, Buffer message) {
        return handle(connection, message.getBytes(), true);
    }

    @OnTextMessage
    public Uni<Void> text(WebSocketConnection connection, String message) {
        return handle(connection, message.getBytes(StandardCharsets.UTF_8), false);
    }

    private static Uni<Void> handle(WebSocketConnection connection, byte[] message, boolean binary) {
        WatchSession session = connection.userData().get(SESSION);
        return Uni.createFrom().voidItem().emitOn(Infrastructure.getDefaultWorkerPool())
                .invoke(() -> session.receive(message, binary));
    }

    /** An error of the connection itself (a reset by the peer, mostly): logged, not rethrown. */
    @OnError
    public Uni<Void> error(WebSocketConnection connection, Throwable error) {
        LOG.debugf("operations watch socket error: %s", error.toString());
        return Uni.createFrom().voidItem();
    }

    @OnClose
    public void close(WebSocketConnection connection) {
        WatchSession session = connection.userData().get(SESSION);
        if (session != null) {
            session.close();
        }
    }
}
