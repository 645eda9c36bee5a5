package dev.syncular.server.sync;

import io.smallrye.mutiny.Uni;
import java.util.List;
import java.util.Map;

/**
 * The host's {@code resolveScopes(actor)} (§3.2 rule 3): the allowed scopes of an actor as one map over
 * every scope variable it holds, across all tables; the value {@code "*"} allows any value. Called at most
 * once per request; a failed {@code Uni} revokes pulls and forbids writes.
 */
@FunctionalInterface
public interface ScopeResolver {
    Uni<Map<String, List<String>>> resolveScopes(String actorId, String partition);

    /**
     * The form the engine calls: the whole authenticated context, including scopes the credential carries
     * ({@link SyncRequestContext#grantedScopes()}). Defaults to {@link #resolveScopes(String, String)}.
     */
    default Uni<Map<String, List<String>>> resolveScopes(SyncRequestContext ctx) {
        return resolveScopes(ctx.actorId(), ctx.partition());
    }
}
