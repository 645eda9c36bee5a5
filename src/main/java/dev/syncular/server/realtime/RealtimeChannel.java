package dev.syncular.server.realtime;

import dev.syncular.server.memory.BufferBudget;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.storage.ClientRecord;
import dev.syncular.server.storage.PartitionState;
import dev.syncular.server.storage.StorageBusy;
import dev.syncular.server.storage.SyncStorage;
import dev.syncular.server.sync.AuthLeases;
import dev.syncular.server.sync.RealtimeDelta;
import dev.syncular.server.sync.ScopeResolver;
import dev.syncular.server.sync.ScopeResolverOutage;
import dev.syncular.server.sync.SyncEngine;
import dev.syncular.server.sync.SyncRequestContext;
import dev.syncular.server.wire.WireException;
import dev.syncular.server.wire.realtime.ChannelTag;
import dev.syncular.server.wire.realtime.ControlMessage;
import dev.syncular.server.wire.realtime.ControlMessages;
import io.quarkus.websockets.next.CloseReason;
import io.quarkus.websockets.next.UserData;
import io.quarkus.websockets.next.WebSocketConnection;
import io.smallrye.mutiny.Uni;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpConnection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * The §8 channel of one hub, behind whichever socket endpoint carries it (the pod's {@code <mount>/realtime},
 * a conformance instance's): the client record and registrations of a connection (§8.1, and after each
 * socket round, §8.7), {@code hello} on open, acks (§8.2) and presence (§8.6) in, socket rounds through the
 * engine's round path (§8.7), tolerated unknown events (§8.1). Every method returns a {@code Uni}, so none
 * blocks the event loop.
 */
public final class RealtimeChannel {
    /** §8.1 {@code hello.protocolVersion}. */
    static final long PROTOCOL_VERSION = 1;

    static final UserData.TypedKey<RealtimeSession> SESSION = new UserData.TypedKey<>("syncular.realtime.session");
    /** The TCP connection under the socket, where the endpoint records it (closes a stuck socket, §8.7). */
    static final UserData.TypedKey<HttpConnection> TRANSPORT = new UserData.TypedKey<>("syncular.realtime.transport");

    /** What the upgrade established for one connection. */
    public record Prepared(
            SyncRequestContext ctx,
            String clientId,
            ClientRecord record,
            PartitionState partition,
            List<RealtimeDelta.Registration> registrations) {}

    private final RealtimeHub hub;
    private final SyncStorage storage;
    private final StorageBusy storageBusy;
    private final ScopeResolver resolver;
    private final SchemaWindow window;
    private final Supplier<SyncEngine> engine;
    private final long maxRequestBytes;
    private final BufferBudget budget;
    private final CredentialLifetime lifetime;

    public RealtimeChannel(
            RealtimeHub hub,
            SyncStorage storage,
            ScopeResolver resolver,
            SchemaWindow window,
            Supplier<SyncEngine> engine,
            long maxRequestBytes,
            StorageBusy storageBusy,
            BufferBudget budget) {
        this.storageBusy = storageBusy;
        this.budget = budget;
        this.hub = hub;
        this.storage = storage;
        this.resolver = resolver;
        this.window = window;
        this.engine = engine;
        this.maxRequestBytes = maxRequestBytes;
        this.lifetime =
                new CredentialLifetime(hub.vertx(), hub.clock(), hub.metrics().failures());
    }

    public RealtimeHub hub() {
        return hub;
    }

    /** The client record, partition and registrations of a connection (§8.1), at connect and after a socket round. */
    public Uni<Prepared> prepare(SyncRequestContext ctx, String clientId) {
        if (ctx.unstorable() != null) {
            return Uni.createFrom().failure(ctx.unstorable());
        }
        // one statement: a reconnect storm's upgrades each take the pool once (docs/BENCHMARKS.md)
        return storage.readSocketEntry(ctx.partition(), clientId).chain(entry -> {
            ClientRecord record = entry.client();
            PartitionState partition = entry.partition();
            if (record == null || !record.actorId().equals(ctx.actorId())) {
                return Uni.createFrom().item(new Prepared(ctx, clientId, null, partition, List.of()));
            }
            return resolver.resolveScopes(ctx)
                    // §7.3.3: during a host-signalled outage the client's valid lease authorizes the
                    // registrations exactly as it authorizes a round (its scopes, its epoch, §2.1)
                    .onFailure(ScopeResolverOutage.class)
                    .recoverWithUni(outage -> leased(ctx, clientId, partition, outage))
                    .map(allowed -> RealtimeDelta.register(window, record.subscriptionsJson(), allowed))
                    // §3.3: a failing resolver revokes every registration
                    .onFailure()
                    .recoverWithItem(List.of())
                    .map(regs -> new Prepared(ctx, clientId, record, partition, regs));
        });
    }

    /** The allowed scopes of the client's valid lease during an outage; fails (revoking) without one or leases off. */
    private Uni<Map<String, List<String>>> leased(
            SyncRequestContext ctx, String clientId, PartitionState partition, Throwable outage) {
        AuthLeases leases = engine.get().leases();
        if (!leases.enabled() || partition == null) {
            return Uni.createFrom().failure(outage);
        }
        return leases.authorize(ctx, clientId, partition.logEpoch());
    }

    /**
     * §8.1: registers the connection with the hub and sends {@code hello}, then the presence snapshot of the
     * keys it holds (§8.6.4). {@code first} is sent before the hello (the conformance host's marker).
     *
     * <p>The session joins the hub first and the partition's head is read after that, so a commit made between
     * the upgrade's read and the open is either counted in the hello ({@code latestCursor}, {@code requiresSync})
     * or notified to the session afterwards — never missed while the hello says {@code requiresSync: false}.
     */
    public Uni<Void> open(WebSocketConnection connection, Prepared p, String first) {
        long prepared = p.partition() == null ? 0 : p.partition().maxCommitSeq();
        long cursor = p.record() == null ? -1 : p.record().cursor();
        RealtimeSession s = new RealtimeSession(
                UUID.randomUUID().toString(),
                p.ctx(),
                p.clientId(),
                p.partition() == null ? null : p.partition().logEpoch(),
                connection,
                hub.outbound(connection, () -> closeTransport(connection)),
                System::currentTimeMillis,
                p.registrations(),
                prepared,
                true,
                maxRequestBytes,
                storageBusy,
                hub.presence().rate());
        s.failures = hub.metrics().failures();
        connection.userData().put(SESSION, s);
        hub.add(s);
        lifetime.watch(connection, p.ctx());
        return storage.readPartition(p.ctx().partition())
                .map(head -> new HeadRead(head, true))
                // the read failed: the prepared head, and the client is told to sync
                .onFailure()
                .recoverWithItem(() -> new HeadRead(p.partition(), false))
                .chain(read -> {
                    PartitionState head = read.head();
                    // §8.1: never pulled (no registrations) or behind the log ⇒ requiresSync, and §8.2 suppression
                    return Uni.createFrom()
                            .completionStage(s.joined(
                                    head == null ? 0 : head.maxCommitSeq(),
                                    head == null ? null : head.logEpoch(),
                                    read.reliable(),
                                    !p.registrations().isEmpty(),
                                    cursor,
                                    h -> ControlMessages.render(new ControlMessage.Hello(
                                            PROTOCOL_VERSION,
                                            s.sessionId,
                                            p.ctx().actorId(),
                                            p.clientId(),
                                            h.cursor(),
                                            h.latestCursor(),
                                            h.requiresSync(),
                                            System.currentTimeMillis())),
                                    first,
                                    hub.metrics()));
                })
                .invoke(() -> hub.presence().registered(s, Set.of()));
    }

    private static void closeTransport(WebSocketConnection connection) {
        HttpConnection tcp = connection.userData().get(TRANSPORT);
        if (tcp != null) {
            tcp.close();
        }
    }

    /** The partition's head as read after the session joined; {@code reliable} false when the read failed. */
    private record HeadRead(PartitionState head, boolean reliable) {}

    public Uni<Void> text(WebSocketConnection connection, String text) {
        RealtimeSession s = connection.userData().get(SESSION);
        if (lifetime.expired(s.ctx)) {
            return lifetime.close(connection);
        }
        s.readFromClient();
        if (text.length() > hub.maxControlChars()) {
            // §8.1 control messages are small (an ack, a presence document under its own cap): a huge one is closed
            // with the socket's "message too big", not parsed on the event loop
            return connection.close(new CloseReason(
                    SocketMessageLimits.MESSAGE_TOO_BIG,
                    "control message exceeds " + hub.maxControlChars() + " characters"));
        }
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
            return storage.advanceClientCursor(
                            s.ctx.partition(),
                            s.clientId,
                            s.ctx.actorId(),
                            s.logEpoch,
                            ack.cursor(),
                            System.currentTimeMillis())
                    .replaceWithVoid()
                    .onFailure()
                    .recoverWithItem(e -> {
                        // the §4.6 retention input stays at the previous ack until the next one is stored
                        hub.metrics().failures().failed(RealtimeFailures.Kind.ACK_WRITE, e);
                        return null;
                    });
        }
        if (m instanceof ControlMessage.PresencePublish publish) {
            hub.presence().published(s, publish);
        }
        return Uni.createFrom().voidItem(); // unknown events are tolerated (§8.1)
    }

    public Uni<Void> binary(WebSocketConnection connection, Buffer message) {
        RealtimeSession s = connection.userData().get(SESSION);
        if (lifetime.expired(s.ctx)) {
            return lifetime.close(connection); // no round runs on an expired credential
        }
        s.readFromClient();
        byte[] bytes = message.getBytes();
        // §8.7: the server MAY close on a client→server tag other than 0x01 (a broken client, surfaced loudly)
        if (bytes.length == 0 || (bytes[0] & 0xff) != ChannelTag.ROUND) {
            return connection.close(new CloseReason(1003, "unknown channel tag"));
        }
        SocketRound.Outcome outcome = s.rounds.chunk(
                s,
                engine.get(),
                budget,
                bytes,
                1,
                registers -> registers ? reregister(s) : Uni.createFrom().voidItem());
        return switch (outcome) {
            case CONTINUE -> Uni.createFrom().voidItem();
            case CLOSE -> connection.close(new CloseReason(1002, "sync round protocol violation"));
            // over syncular.max-request-bytes: the socket's 413 (SocketRound.Outcome.TOO_LARGE says why not in-band)
            case TOO_LARGE ->
                connection.close(new CloseReason(
                        SocketMessageLimits.MESSAGE_TOO_BIG, SocketMessageLimits.roundTooLarge(maxRequestBytes)));
        };
    }

    /** §8.7: a completed pulling round replaces the registrations from the client record it just wrote. */
    private Uni<Void> reregister(RealtimeSession s) {
        return prepare(s.ctx, s.clientId)
                .invoke(p -> {
                    hub.presence().registered(s, s.register(p.registrations()));
                    if (p.partition() != null) {
                        s.logEpoch = p.partition().logEpoch();
                    }
                })
                .replaceWithVoid()
                .onFailure()
                .recoverWithItem(e -> {
                    hub.metrics().failures().failed(RealtimeFailures.Kind.REGISTRATION, e);
                    hub.presence().registered(s, s.register(List.of()));
                    return null;
                });
    }

    public Uni<Void> pong(WebSocketConnection connection) {
        RealtimeSession s = connection.userData().get(SESSION);
        if (s != null) {
            s.readFromClient();
        }
        return Uni.createFrom().voidItem();
    }

    /**
     * An error the socket layer reports for the connection (a reset by the peer, a failed write, a frame it could
     * not read): logged and counted ({@link RealtimeFailures}), a reset at DEBUG; the close that follows ends the
     * session. A message the transport dropped for its size ({@link SocketMessageLimits#overflowed}) — a round past
     * {@code syncular.max-request-bytes} sent as one message — closes the connection with 1009 and its reason, as a
     * round past the cap in several messages does ({@link SocketRound.Outcome#TOO_LARGE}): the round's stream lost
     * bytes, and nothing is dropped silently.
     */
    public Uni<Void> error(WebSocketConnection connection, Throwable error) {
        if (SocketMessageLimits.overflowed(error)) {
            return connection.close(new CloseReason(
                    SocketMessageLimits.MESSAGE_TOO_BIG,
                    SocketMessageLimits.overflowedText(error)
                            ? "control message exceeds " + hub.maxControlChars() + " characters"
                            : SocketMessageLimits.roundTooLarge(maxRequestBytes)));
        }
        hub.metrics().failures().report(RealtimeFailures.Kind.CONNECTION, error, connection);
        return Uni.createFrom().voidItem();
    }

    /** The connection ended: it leaves the hub and its presence leaves (§8.6.1). */
    public Uni<Void> close(WebSocketConnection connection) {
        lifetime.release(connection);
        RealtimeSession s = connection.userData().get(SESSION);
        if (s != null) {
            hub.remove(s);
            s.rounds.closed(); // a round cut off mid-request gives its bytes back to the budget
        }
        return Uni.createFrom().voidItem();
    }
}
