package dev.syncular.server.auth;

import dev.syncular.server.config.SyncularConfig;
import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.sync.SyncRequestContext;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpServerRequest;

/**
 * Development authenticator: trusts the {@value #ACTOR_HEADER} header as the actor id and takes the
 * partition from {@value #PARTITION_HEADER}, else {@code syncular.dev-auth.partition}. Anyone can claim
 * any actor — for local development and tests only. {@link BuiltInAuth} uses it only while
 * {@code syncular.auth.jwt.*} is not configured. Outside dev/test it refuses to start unless
 * {@code syncular.dev-auth.enabled=true} is set explicitly ({@link DevAuthStartupCheck}).
 */
public class DevHeaderAuthenticator implements Authenticator {
    public static final String ACTOR_HEADER = "x-actor-id";
    public static final String PARTITION_HEADER = "x-syncular-partition";

    private final String defaultPartition;

    public DevHeaderAuthenticator(SyncularConfig config) {
        this.defaultPartition = config.devAuth().partition();
    }

    @Override
    public Uni<SyncRequestContext> authenticate(HttpServerRequest request) {
        String actor = trimmed(request.getHeader(ACTOR_HEADER));
        if (actor == null) {
            return Uni.createFrom().failure(new SyncError(ErrorCode.AUTH_REQUIRED, "authentication required"));
        }
        String partition = trimmed(request.getHeader(PARTITION_HEADER));
        return Uni.createFrom().item(new SyncRequestContext(actor, partition == null ? defaultPartition : partition));
    }

    private static String trimmed(String s) {
        if (s == null) {
            return null;
        }
        String t = s.trim();
        return t.isEmpty() ? null : t;
    }
}
