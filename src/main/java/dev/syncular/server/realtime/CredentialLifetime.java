package dev.syncular.server.realtime;

import dev.syncular.server.sync.SyncRequestContext;
import io.quarkus.websockets.next.CloseReason;
import io.quarkus.websockets.next.UserData;
import io.quarkus.websockets.next.WebSocketConnection;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;
import java.util.function.LongSupplier;

/**
 * A socket lives no longer than the credential its upgrade was authenticated with (§8.1: host authentication
 * runs at upgrade; §10.2 {@code sync.auth_required} is answered by a WebSocket close on this binding). At
 * {@link SyncRequestContext#credentialExpiresAtMs()} — for a JWT, {@code exp} plus the clock skew, the instant
 * {@code POST /sync} starts answering 401 for the same token — one Vert.x timer per connection closes it with
 * {@link #EXPIRED_CODE}; the client reconnects with a fresh credential, which is authenticated (and its scopes
 * resolved) anew. A frame that arrives after that instant but before the timer ran closes the connection the
 * same way instead of being served. The timer is cancelled when the connection closes for any other reason.
 * A credential without a lifetime ({@link SyncRequestContext#NO_EXPIRY}) sets no timer.
 */
final class CredentialLifetime {
    /** The close code of a socket whose credential expired (application range, RFC 6455 §7.4.2). */
    static final int EXPIRED_CODE = 4401;
    /** Its close reason: the §10.2 code, whose recommended action is {@code refreshAuth}. */
    static final String EXPIRED_REASON = "sync.auth_required: credential expired";

    private static final UserData.TypedKey<Long> TIMER = new UserData.TypedKey<>("syncular.realtime.credential-timer");

    private final Vertx vertx;
    private final LongSupplier clock;
    private final RealtimeFailures failures;

    CredentialLifetime(Vertx vertx, LongSupplier clock, RealtimeFailures failures) {
        this.vertx = vertx;
        this.clock = clock;
        this.failures = failures;
    }

    /** Arms the connection's expiry timer (nothing for a credential without a lifetime). */
    void watch(WebSocketConnection connection, SyncRequestContext ctx) {
        long expiresAt = ctx.credentialExpiresAtMs();
        if (expiresAt == SyncRequestContext.NO_EXPIRY) {
            return;
        }
        long delay = expiresAt - clock.getAsLong();
        if (delay <= 0) {
            closeNow(connection);
            return;
        }
        long timer = vertx.setTimer(delay, t -> {
            connection.userData().remove(TIMER);
            closeNow(connection);
        });
        connection.userData().put(TIMER, timer);
    }

    /** Whether the connection's credential has expired by now (checked on every frame the client sends). */
    boolean expired(SyncRequestContext ctx) {
        return ctx.credentialExpiresAtMs() != SyncRequestContext.NO_EXPIRY
                && clock.getAsLong() >= ctx.credentialExpiresAtMs();
    }

    private void closeNow(WebSocketConnection connection) {
        close(connection).subscribe().with(v -> {}, e -> failures.report(RealtimeFailures.Kind.CLOSE, e, connection));
    }

    /** Closes the connection with {@link #EXPIRED_CODE}. */
    Uni<Void> close(WebSocketConnection connection) {
        return connection.isClosed()
                ? Uni.createFrom().voidItem()
                : connection.close(new CloseReason(EXPIRED_CODE, EXPIRED_REASON));
    }

    /** The connection ended: its timer, if any, is cancelled. */
    void release(WebSocketConnection connection) {
        Long timer = connection.userData().remove(TIMER);
        if (timer != null) {
            vertx.cancelTimer(timer);
        }
    }
}
