package dev.syncular.server.conformance;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.boot.SignalListeners;
import dev.syncular.server.config.SyncularConfig;
import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.memory.BufferBudget;
import dev.syncular.server.realtime.RealtimeChannel;
import dev.syncular.server.round.ErrorBodies;
import dev.syncular.server.sync.SyncRequestContext;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.quarkus.websockets.next.OnBinaryMessage;
import io.quarkus.websockets.next.OnClose;
import io.quarkus.websockets.next.OnError;
import io.quarkus.websockets.next.OnOpen;
import io.quarkus.websockets.next.OnPongMessage;
import io.quarkus.websockets.next.OnTextMessage;
import io.quarkus.websockets.next.PathParam;
import io.quarkus.websockets.next.UserData;
import io.quarkus.websockets.next.WebSocket;
import io.quarkus.websockets.next.WebSocketConnection;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.util.List;
import java.util.Map;

/**
 * {@code WS /__conformance/instances/{id}/realtime?actorId=A&clientId=C} (docs/CONFORMANCE.md): the §8 channel
 * of one instance for a host-chosen actor. The first text frame is {@code {"$conformance":"connected"}}, then
 * exactly what {@code <mount>/realtime} sends; a refused connection gets
 * {@code {"$conformance":"connect_error","error":{…}}} and is closed. With the host off, the route is a 404.
 */
@WebSocket(path = ConformanceRealtimeEndpoint.PATH)
public class ConformanceRealtimeEndpoint {
    static final String PATH = "/__conformance/instances/{id}/realtime";
    private static final UserData.TypedKey<RealtimeChannel> CHANNEL =
            new UserData.TypedKey<>("syncular.conformance.realtime");

    @Inject
    ConformanceHost host;

    @Inject
    SyncularConfig config;

    @Inject
    Vertx vertx;

    @Inject
    BufferBudget budget;

    @Inject
    SignalListeners listeners;

    /** Ahead of the upgrade: 404 while the host is off (the mount is stripped before, {@code http.MountRoute}). */
    void routes(@Observes Router router) {
        router.route("/__conformance/instances/:id/realtime").order(-100).handler(this::filter);
    }

    private void filter(RoutingContext rc) {
        if (!host.enabled()) {
            rc.response()
                    .setStatusCode(404)
                    .putHeader("Content-Type", "application/json")
                    .end(ErrorBodies.body(ErrorCode.NOT_FOUND, "not found", Map.of())
                            .toString());
        } else {
            rc.next();
        }
    }

    @OnOpen
    public Uni<Void> open(WebSocketConnection connection, @PathParam String id) {
        Map<String, List<String>> query = new QueryStringDecoder(
                        "?" + nullToEmpty(connection.handshakeRequest().query()))
                .parameters();
        String actor = first(query, "actorId");
        String clientId = first(query, "clientId");
        ConformanceInstance instance;
        try {
            instance = host.get(id);
        } catch (SyncError e) {
            return refuse(connection, e);
        }
        if (actor == null || actor.isBlank()) {
            return refuse(connection, new SyncError(ErrorCode.AUTH_REQUIRED, "authentication required"));
        }
        if (clientId == null || clientId.isBlank()) {
            return refuse(connection, new SyncError(ErrorCode.INVALID_CLIENT_ID, "clientId is required"));
        }
        RealtimeChannel channel =
                instance.realtime(vertx, config.maxRequestBytes().asLongValue(), budget, listeners);
        connection.userData().put(CHANNEL, channel);
        // the first socket starts the instance's hub: connect once it listens, so no commit slips past
        return Uni.createFrom()
                .completionStage(instance.realtimeStarted())
                .chain(() -> channel.prepare(new SyncRequestContext(actor, instance.partition), clientId))
                .chain(p -> channel.open(connection, p, marker("connected").toString()))
                .onFailure()
                .recoverWithUni(e -> refuse(connection, e));
    }

    private static Uni<Void> refuse(WebSocketConnection connection, Throwable e) {
        SyncError error = e instanceof SyncError s ? s : new SyncError(ErrorCode.INTERNAL_ERROR, "connection failed");
        ObjectNode m = marker("connect_error");
        m.set("error", ErrorBodies.body(error.code(), error.getMessage(), error.details()));
        return connection.sendText(m.toString()).chain(() -> connection.close());
    }

    private static ObjectNode marker(String state) {
        return JsonNodeFactory.instance.objectNode().put("$conformance", state);
    }

    private static String first(Map<String, List<String>> query, String name) {
        List<String> v = query.get(name);
        return v == null || v.isEmpty() ? null : v.get(0);
    }

    private static String nullToEmpty(String s) {
        return s == null ? "" : s;
    }

    @OnTextMessage
    public Uni<Void> text(WebSocketConnection connection, String text) {
        RealtimeChannel c = connection.userData().get(CHANNEL);
        return c == null ? Uni.createFrom().voidItem() : c.text(connection, text);
    }

    @OnBinaryMessage
    public Uni<Void> binary(WebSocketConnection connection, Buffer message) {
        RealtimeChannel c = connection.userData().get(CHANNEL);
        return c == null ? Uni.createFrom().voidItem() : c.binary(connection, message);
    }

    @OnPongMessage
    public Uni<Void> pong(WebSocketConnection connection, Buffer data) {
        RealtimeChannel c = connection.userData().get(CHANNEL);
        return c == null ? Uni.createFrom().voidItem() : c.pong(connection);
    }

    @OnError
    public Uni<Void> error(WebSocketConnection connection, Throwable error) {
        RealtimeChannel c = connection.userData().get(CHANNEL);
        return c == null ? Uni.createFrom().voidItem() : c.error(connection, error);
    }

    @OnClose
    public Uni<Void> close(WebSocketConnection connection) {
        RealtimeChannel c = connection.userData().get(CHANNEL);
        return c == null ? Uni.createFrom().voidItem() : c.close(connection);
    }
}
