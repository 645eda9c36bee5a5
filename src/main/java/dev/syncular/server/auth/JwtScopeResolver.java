package dev.syncular.server.auth;

import dev.syncular.server.sync.ScopeResolver;
import dev.syncular.server.sync.SyncRequestContext;
import io.smallrye.mutiny.Uni;
import java.util.List;
import java.util.Map;

/**
 * §3.2 {@code resolveScopes} for JWT authentication: the allowed scopes are exactly what the verified token
 * grants ({@link SyncRequestContext#grantedScopes()}, filled by {@link JwtAuthenticator}). A token without
 * scope claims grants nothing: pulls are revoked (§3.2 rule 5) and writes forbidden (§3.4). Scope variables
 * no table declares fail the request with {@code sync.invalid_subscription} (§3.2 rule 3, fail loud).
 */
public final class JwtScopeResolver implements ScopeResolver {
    @Override
    public Uni<Map<String, List<String>>> resolveScopes(SyncRequestContext ctx) {
        Map<String, List<String>> granted = ctx.grantedScopes();
        return Uni.createFrom().item(granted == null ? Map.of() : granted);
    }

    /** Without the request context there is no token: fail, which revokes (§3.2 rule 5) — never grant. */
    @Override
    public Uni<Map<String, List<String>>> resolveScopes(String actorId, String partition) {
        return Uni.createFrom()
                .failure(new IllegalStateException("JWT scopes are read from the authenticated request"));
    }
}
