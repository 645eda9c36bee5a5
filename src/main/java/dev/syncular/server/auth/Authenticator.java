package dev.syncular.server.auth;

import dev.syncular.server.sync.SyncRequestContext;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpServerRequest;

/**
 * Host authentication (§1.1): runs on every protocol HTTP request and establishes the actor and its
 * partition. The protocol carries no credentials; an implementation reads whatever the host uses (bearer
 * token, session cookie, mTLS identity) from the request.
 *
 * <p>Built in: {@link JwtAuthenticator} when {@code syncular.auth.jwt.*} is configured, else the development
 * {@link DevHeaderAuthenticator} ({@code boot.AuthProducer}). Replace them by declaring your own CDI bean
 * implementing this interface (e.g. {@code @ApplicationScoped class MyAuthenticator implements Authenticator});
 * the built-in one is a {@code @DefaultBean} and steps aside.
 *
 * <p>Failure: fail the {@code Uni} with {@code new SyncError(ErrorCode.AUTH_REQUIRED, ...)} (answered
 * with HTTP 401 {@code sync.auth_required}). Any other failure is answered as 500
 * {@code sync.internal_error}. Do not block: the method may be called on an event-loop thread.
 */
public interface Authenticator {
    Uni<SyncRequestContext> authenticate(HttpServerRequest request);
}
