package dev.syncular.server.realtime;

import io.quarkus.websockets.next.OnBinaryMessage;
import io.quarkus.websockets.next.OnClose;
import io.quarkus.websockets.next.OnError;
import io.quarkus.websockets.next.OnOpen;
import io.quarkus.websockets.next.OnPongMessage;
import io.quarkus.websockets.next.OnTextMessage;
import io.quarkus.websockets.next.WebSocket;
import io.quarkus.websockets.next.WebSocketConnection;
import io.smallrye.mutiny.Uni;
import io.vertx.core.buffer.Buffer;
import jakarta.inject.Inject;

/**
 * The pod's §8 socket at {@code <mount>/realtime}: the connection was authenticated and prepared by
 * {@link RealtimeUpgrade}; its messages go to the pod's {@link RealtimeChannel}.
 */
@WebSocket(path = RealtimeUpgrade.ENDPOINT_PATH, endpointId = RealtimeUpgrade.ENDPOINT_ID)
public class RealtimeEndpoint {
    @Inject
    PodRealtime realtime;

    @OnOpen
    public Uni<Void> open(WebSocketConnection connection) {
        return realtime.channel().open(connection, connection.userData().get(RealtimeUpgrade.PREPARED), null);
    }

    @OnTextMessage
    public Uni<Void> text(WebSocketConnection connection, String text) {
        return realtime.channel().text(connection, text);
    }

    @OnBinaryMessage
    public Uni<Void> binary(WebSocketConnection connection, Buffer message) {
        return realtime.channel().binary(connection, message);
    }

    @OnPongMessage
    public Uni<Void> pong(WebSocketConnection connection, Buffer data) {
        return realtime.channel().pong(connection);
    }

    /** An error of the connection itself (a reset by the peer, mostly): logged and counted, not rethrown. */
    @OnError
    public Uni<Void> error(WebSocketConnection connection, Throwable error) {
        return realtime.channel().error(connection, error);
    }

    @OnClose
    public Uni<Void> close(WebSocketConnection connection) {
        return realtime.channel().close(connection);
    }
}
