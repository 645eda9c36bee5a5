package dev.syncular.server.realtime;

import dev.syncular.server.config.SyncularConfig;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import dev.syncular.server.sync.SyncEngine;
import dev.syncular.server.wire.realtime.ChannelTag;
import dev.syncular.server.wire.WireException;
import dev.syncular.server.wire.realtime.ControlMessage;
import dev.syncular.server.wire.realtime.ControlMessages;
import io.quarkus.websockets.next.CloseReason;
import io.quarkus.websockets.next.OnBinaryMessage;
import io.quarkus.websockets.next.OnClose;
import io.quarkus.websockets.next.OnOpen;
import io.quarkus.websockets.next.OnPongMessage;
import io.quarkus.websockets.next.OnTextMessage;
import io.quarkus.websockets.next.UserData;
import io.quarkus.websockets.next.WebSocket;
import io.quarkus.websockets.next.WebSocketConnection;
import io.smallrye.mutiny.Uni;
import io.vertx.core.buffer.Buffer;
import jakarta.inject.Inject;
import java.util.UUID;

/**
 * The §8 socket: {@code hello} on open (§8.1), acks (§8.2) and tolerated unknown control events in, the pod's
 * deltas and wake-ups out through {@link RealtimeHub}. Every callback returns a {@code Uni}, so none blocks the
 * event loop.
 */
@WebSocket(path = RealtimeUpgrade.ENDPOINT_PATH)
public class RealtimeEndpoint {
    /** §8.1 {@code hello.protocolVersion}. */
    static final long PROTOCOL_VERSION = 1;
    static final UserData.TypedKey<RealtimeSession> SESSION = new UserData.TypedKey<>("syncular.realtime.session");

    @Inject
    RealtimeHub hub;

    @Inject
    PostgresSyncStorage storage;

    @Inject
    SyncEngine engine;

    @Inject
    RealtimeUpgrade upgrade;

    @Inject
    SyncularConfig config;

    @OnOpen
    public Uni<Void> open(WebSocketConnection connection) {
        RealtimeUpgrade.Prepared p = connection.userData().get(RealtimeUpgrade.PREPARED);
        long latest = p.partition() == null ? 0 : p.partition().maxCommitSeq();
        long cursor = p.record() == null ? -1 : p.record().cursor();
        // §8.1: never pulled (no registrations) or behind the log ⇒ requiresSync, and §8.2 suppression
        boolean requiresSync = p.registrations().isEmpty() || cursor < latest;
        RealtimeSession s = new RealtimeSession(UUID.randomUUID().toString(), p.ctx(), p.clientId(),
                p.partition() == null ? null : p.partition().logEpoch(), connection, System::currentTimeMillis,
                p.registrations(), latest, requiresSync, config.maxRequestBytes().asLongValue());
        connection.userData().put(SESSION, s);
        hub.add(s);
        String hello = ControlMessages.render(new ControlMessage.Hello(PROTOCOL_VERSION, s.sessionId,
                p.ctx().actorId(), p.clientId(), cursor, latest, requiresSync, System.currentTimeMillis()));
        // §8.6.4: the snapshot of the keys it holds follows the hello
        return connection.sendText(hello).invoke(() -> hub.presenceRegistered(s, java.util.Set.of()));
    }

    @OnTextMessage
    public Uni<Void> text(WebSocketConnection connection, String text) {
        RealtimeSession s = connection.userData().get(SESSION);
        s.lastHeardMs = System.currentTimeMillis();
        ControlMessage m;
        try {
            m = ControlMessages.parseClientMessage(text);
        } catch (WireException e) {
            // §8.1: a known event of the wrong shape is a parse error, not a tolerated variant
            return connection.close(new CloseReason(1007, "malformed control message"));
        }
        if (m instanceof ControlMessage.Ack ack) {
            s.ack(ack.cursor(), hub.metrics());
            if (s.logEpoch == null || ack.cursor() < 0) {
                return Uni.createFrom().voidItem();
            }
            return storage.advanceClientCursor(s.ctx.partition(), s.clientId, s.ctx.actorId(), s.logEpoch, ack.cursor(),
                    System.currentTimeMillis()).replaceWithVoid().onFailure().recoverWithNull();
        }
        if (m instanceof ControlMessage.PresencePublish publish) {
            hub.presencePublished(s, publish);
        }
        return Uni.createFrom().voidItem(); // unknown events are tolerated (§8.1)
    }

    @OnBinaryMessage
    public Uni<Void> binary(WebSocketConnection connection, Buffer message) {
        RealtimeSession s = connection.userData().get(SESSION);
        s.lastHeardMs = System.currentTimeMillis();
        byte[] bytes = message.getBytes();
        // §8.7: the server MAY close on a client→server tag other than 0x01 (a broken client, surfaced loudly)
        if (bytes.length == 0 || (bytes[0] & 0xff) != ChannelTag.ROUND) {
            return connection.close(new CloseReason(1003, "unknown channel tag"));
        }
        SocketRound.Outcome outcome = s.rounds.chunk(s, engine, bytes, 1,
                registers -> registers ? reregister(s) : Uni.createFrom().voidItem());
        return outcome == SocketRound.Outcome.CLOSE
                ? connection.close(new CloseReason(1002, "sync round protocol violation"))
                : Uni.createFrom().voidItem();
    }

    /** §8.7: a completed pulling round replaces the registrations from the client record it just wrote. */
    private Uni<Void> reregister(RealtimeSession s) {
        return upgrade.prepare(s.ctx, s.clientId).invoke(p -> {
            hub.presenceRegistered(s, s.register(p.registrations()));
            if (p.partition() != null) {
                s.logEpoch = p.partition().logEpoch();
            }
        }).replaceWithVoid().onFailure().recoverWithItem(() -> {
            hub.presenceRegistered(s, s.register(java.util.List.of()));
            return null;
        });
    }

    @OnPongMessage
    public Uni<Void> pong(WebSocketConnection connection, Buffer data) {
        RealtimeSession s = connection.userData().get(SESSION);
        if (s != null) {
            s.lastHeardMs = System.currentTimeMillis();
        }
        return Uni.createFrom().voidItem();
    }

    @OnClose
    public Uni<Void> close(WebSocketConnection connection) {
        RealtimeSession s = connection.userData().get(SESSION);
        if (s != null) {
            hub.remove(s); // and its presence leaves (§8.6.1)
        }
        return Uni.createFrom().voidItem();
    }
}
