package dev.syncular.server.realtime;

import dev.syncular.server.auth.Authenticator;
import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.operations.OperationsConfig;
import dev.syncular.server.round.HttpError;
import dev.syncular.server.storage.StorageBusy;
import dev.syncular.server.sync.SyncRequestContext;
import io.quarkus.websockets.next.HttpUpgradeCheck;
import io.quarkus.websockets.next.UserData;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

/**
 * The upgrade of the REMOTE.md §6 watch socket, {@code GET <mount>/operations/realtime}: authenticated exactly
 * as the §8.1 sync socket ({@link RealtimeUpgrade}) — the same {@link Authenticator} as {@code POST /sync}, a
 * browser's bearer token from the query parameter or the cookie ({@link UpgradeToken}, the header wins) — before
 * the upgrade, so a refusal is the §10.1 JSON error with its status, never a half-open socket. No
 * {@code clientId} parameter: each {@code watch} message names its client id (§6).
 *
 * <p>As for the sync socket, a route ahead of the websockets-next endpoint authenticates and hands the request
 * context to the upgrade under a one-time random ticket, which this class, as the endpoint's
 * {@link HttpUpgradeCheck}, redeems into the connection's {@link UserData}; an upgrade without a redeemable
 * ticket is refused (404). Refused too: realtime off ({@code syncular.realtime.enabled=false}: no commit
 * signal, 404 {@code sync.not_found}), a draining pod and one at {@code syncular.operations.watch.max-connections}
 * open watch sockets (429 {@code sync.websocket_connection_limit}).
 */
@ApplicationScoped
public class OperationWatchUpgrade implements HttpUpgradeCheck {
    static final UserData.TypedKey<SyncRequestContext> CONTEXT =
            new UserData.TypedKey<>("syncular.operations.watch.context");
    /** The path of the websockets-next endpoint and of its upgrade route, below the mount ({@code http.MountRoute}). */
    static final String ENDPOINT_PATH = "/operations/realtime";

    static final String ENDPOINT_ID = "syncular-operations-realtime";
    private static final String TICKET_HEADER = "x-syncular-watch-ticket";
    private final PodRealtime realtime;
    private final PodOperationWatches pod;
    private final int maxConnections;
    private final UpgradeHandshake<SyncRequestContext> handshake;

    @Inject
    public OperationWatchUpgrade(
            Authenticator authenticator,
            PodRealtime realtime,
            RealtimeConfig config,
            PodOperationWatches pod,
            OperationsConfig operations,
            StorageBusy storageBusy) {
        this.pod = pod;
        this.maxConnections = operations.watch().maxConnections();
        this.realtime = realtime;
        this.handshake = new UpgradeHandshake<>(
                TICKET_HEADER, "Operations watch", authenticator, new UpgradeToken(config), storageBusy);
    }

    void routes(@Observes Router router) {
        router.route(ENDPOINT_PATH).order(-100).handler(this::filter);
    }

    private void filter(RoutingContext rc) {
        HttpServerRequest req = rc.request();
        handshake.stripTicket(req);
        if (!"websocket".equalsIgnoreCase(req.getHeader("Upgrade"))) {
            refuse(rc, new HttpError(400, ErrorCode.INVALID_REQUEST, "a WebSocket upgrade is required"));
            return;
        }
        if (!realtime.enabled()) {
            refuse(rc, new SyncError(ErrorCode.NOT_FOUND, "realtime is not enabled"));
            return;
        }
        if (realtime.hub().draining()) {
            refuse(rc, new SyncError(ErrorCode.WEBSOCKET_CONNECTION_LIMIT, "server is shutting down"));
            return;
        }
        if (pod.openConnections() >= maxConnections) {
            refuse(rc, new SyncError(ErrorCode.WEBSOCKET_CONNECTION_LIMIT, "too many watch connections"));
            return;
        }
        if (!realtime.admitsSocket()) {
            refuse(rc, PodRealtime.socketBudgetSpent());
            return;
        }
        handshake.admit(rc, ctx -> Uni.createFrom().item(ctx));
    }

    private void refuse(RoutingContext rc, Throwable e) {
        handshake.refuse(rc, e);
    }

    @Override
    public boolean appliesTo(String endpointId) {
        return ENDPOINT_ID.equals(endpointId);
    }

    @Override
    public Uni<CheckResult> perform(HttpUpgradeContext context) {
        SyncRequestContext ctx = handshake.redeem(context.httpRequest());
        if (ctx == null) {
            return CheckResult.rejectUpgrade(404);
        }
        context.userData().put(CONTEXT, ctx);
        context.userData().put(RealtimeChannel.TRANSPORT, context.httpRequest().connection());
        return CheckResult.permitUpgrade();
    }
}
