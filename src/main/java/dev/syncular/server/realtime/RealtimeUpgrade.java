package dev.syncular.server.realtime;

import dev.syncular.server.auth.Authenticator;
import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.round.HttpError;
import dev.syncular.server.storage.StorableText;
import dev.syncular.server.storage.StorageBusy;
import io.quarkus.websockets.next.HttpUpgradeCheck;
import io.quarkus.websockets.next.UserData;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.util.Map;

/**
 * §8.1 upgrade: {@code GET <mount>/realtime?clientId=…} is authenticated by the same {@link Authenticator} as
 * {@code POST /sync} (a browser's bearer token may come from the query or a cookie, {@link UpgradeToken}), and the client record (§4.5: registered subscriptions, cursor, wire version), the
 * partition's latest cursor and the actor's allowed scopes are loaded — all before the upgrade, so every
 * refusal is an HTTP answer with the §10.1 JSON error and its status, never a half-open socket.
 *
 * <p>A route ahead of the websockets-next endpoint does that work (an {@link HttpUpgradeCheck} can refuse
 * with a status but not with a body); it hands the prepared session to the upgrade under a one-time random
 * ticket, which this class, as the endpoint's {@link HttpUpgradeCheck}, redeems into the connection's
 * {@link UserData}. An upgrade without a redeemable ticket (e.g. {@code /realtime} outside the mount) is
 * refused.
 */
@ApplicationScoped
public class RealtimeUpgrade implements HttpUpgradeCheck {
    static final String TICKET_HEADER = "x-syncular-realtime-ticket";
    static final UserData.TypedKey<RealtimeChannel.Prepared> PREPARED =
            new UserData.TypedKey<>("syncular.realtime.prepared");
    /** The path of the websockets-next endpoint and of its upgrade route, below the mount ({@code http.MountRoute}). */
    static final String ENDPOINT_PATH = "/realtime";
    /** The endpoint this upgrade check guards (other endpoints, e.g. the conformance host's, have their own). */
    static final String ENDPOINT_ID = "syncular-realtime";

    private final PodRealtime realtime;
    private final UpgradeHandshake<RealtimeChannel.Prepared> handshake;

    @Inject
    public RealtimeUpgrade(
            Authenticator authenticator, PodRealtime realtime, RealtimeConfig config, StorageBusy storageBusy) {
        this.realtime = realtime;
        this.handshake =
                new UpgradeHandshake<>(TICKET_HEADER, "Realtime", authenticator, new UpgradeToken(config), storageBusy);
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
        if (realtime.atCapacity()) {
            refuse(rc, new SyncError(ErrorCode.WEBSOCKET_CONNECTION_LIMIT, "too many realtime connections"));
            return;
        }
        if (!realtime.admitsSocket()) {
            refuse(rc, PodRealtime.socketBudgetSpent());
            return;
        }
        String clientId = req.getParam("clientId");
        if (clientId == null || clientId.isBlank()) {
            refuse(rc, new SyncError(ErrorCode.INVALID_CLIENT_ID, "clientId is required"));
            return;
        }
        if (!StorableText.storableKey(clientId)) {
            refuse(
                    rc,
                    new SyncError(
                            ErrorCode.INVALID_REQUEST,
                            "identifier holds U+0000 or exceeds the length limit",
                            Map.of("field", "clientId", "maxBytes", StorableText.MAX_KEY_BYTES)));
            return;
        }
        handshake.admit(rc, ctx -> realtime.channel().prepare(ctx, clientId));
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
        RealtimeChannel.Prepared prepared = handshake.redeem(context.httpRequest());
        if (prepared == null) {
            return CheckResult.rejectUpgrade(404);
        }
        context.userData().put(PREPARED, prepared);
        context.userData().put(RealtimeChannel.TRANSPORT, context.httpRequest().connection());
        return CheckResult.permitUpgrade();
    }
}
