package dev.syncular.server.realtime;

import dev.syncular.server.auth.Authenticator;
import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.round.ErrorBodies;
import dev.syncular.server.round.HttpError;
import dev.syncular.server.round.RoundFailure;
import dev.syncular.server.round.SyncRound;
import dev.syncular.server.storage.StorageBusy;
import dev.syncular.server.sync.SyncRequestContext;
import io.quarkus.websockets.next.HttpUpgradeCheck;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.RoutingContext;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.jboss.logging.Logger;

/**
 * The authenticate-before-upgrade handshake both sockets share (§8.1 sync socket, REMOTE.md §6 watch socket): a
 * route ahead of the websockets-next endpoint authenticates the request with the same {@link Authenticator} as
 * {@code POST /sync} (a browser's token from the query or a cookie, {@link UpgradeToken}; the header wins),
 * prepares what the socket needs and hands it to the upgrade under a one-time random ticket header, which the
 * endpoint's {@link HttpUpgradeCheck} redeems. Every refusal before the upgrade is the §10.1 JSON error with its
 * status, mapped as {@code POST /sync} maps it ({@link RoundFailure}), never a half-open socket. A ticket not
 * redeemed within 30 s is forgotten.
 *
 * @param <T> what the socket is opened with (the prepared sync session, or the watch socket's request context)
 */
final class UpgradeHandshake<T> {
    private static final Logger LOG = Logger.getLogger(UpgradeHandshake.class);
    private static final long TICKET_TTL_MS = 30_000;

    private final ConcurrentHashMap<String, T> tickets = new ConcurrentHashMap<>();
    private final String ticketHeader;
    private final String socketName;
    private final Authenticator authenticator;
    private final UpgradeToken browserToken;
    private final StorageBusy storageBusy;

    /**
     * @param socketName   names the socket in the log line of an internal failure
     * @param storageBusy  which failures are a transient storage refusal (answered {@code sync.rate_limited})
     */
    UpgradeHandshake(
            String ticketHeader,
            String socketName,
            Authenticator authenticator,
            UpgradeToken browserToken,
            StorageBusy storageBusy) {
        this.storageBusy = storageBusy;
        this.ticketHeader = ticketHeader;
        this.socketName = socketName;
        this.authenticator = authenticator;
        this.browserToken = browserToken;
    }

    /** Drops a ticket header the client sent itself: only this route sets one. */
    void stripTicket(HttpServerRequest req) {
        req.headers().remove(ticketHeader);
    }

    /**
     * Authenticates {@code rc}'s request, prepares its socket with {@code prepare} and lets the upgrade go on with
     * a ticket for the result; any failure is refused. Call it on the request's event loop, after the route's own
     * checks.
     */
    void admit(RoutingContext rc, Function<SyncRequestContext, Uni<T>> prepare) {
        HttpServerRequest req = rc.request();
        try {
            browserToken.apply(req);
        } catch (HttpError e) {
            refuse(rc, e);
            return;
        }
        Context context = Vertx.currentContext();
        req.pause();
        SyncRound.authenticated(authenticator.authenticate(req))
                .chain(ctx -> prepare.apply(ctx))
                .subscribe()
                .with(
                        prepared -> context.runOnContext(v -> {
                            String ticket = UUID.randomUUID().toString();
                            tickets.put(ticket, prepared);
                            // redeemed by the upgrade at once; forgotten if the handshake never gets there
                            rc.vertx().setTimer(TICKET_TTL_MS, t -> tickets.remove(ticket));
                            req.headers().set(ticketHeader, ticket);
                            req.resume();
                            rc.next();
                        }),
                        e -> context.runOnContext(v -> {
                            req.resume();
                            refuse(rc, e);
                        }));
    }

    /** What the ticket of this upgrade stands for, once; {@code null} without a redeemable ticket. */
    T redeem(HttpServerRequest upgrade) {
        String ticket = upgrade.getHeader(ticketHeader);
        return ticket == null ? null : tickets.remove(ticket);
    }

    /** The §10.1 JSON error with its HTTP status, mapped as {@code POST /sync} maps it ({@link RoundFailure}). */
    void refuse(RoutingContext rc, Throwable e) {
        RoundFailure error = RoundFailure.of(e, storageBusy);
        if (error.internal()) {
            LOG.errorf(e, "%s upgrade failed; answered as sync.internal_error", socketName);
        }
        if (!rc.response().ended()) {
            rc.response().setStatusCode(error.status()).putHeader("Content-Type", "application/json");
            if (error.retryAfter() || error.code() == ErrorCode.WEBSOCKET_CONNECTION_LIMIT) {
                rc.response().putHeader("Retry-After", error.retryAfterSeconds());
            }
            rc.response()
                    .end(ErrorBodies.body(error.code(), error.message(), error.details())
                            .toString());
        }
    }
}
