package dev.syncular.server.auth;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.sync.SyncRequestContext;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpServerRequest;

/**
 * Development authenticator: trusts the {@value #ACTOR_HEADER} header as the actor id and takes the
 * partition from {@value #PARTITION_HEADER}, else {@code syncular.dev-auth.partition}. Anyone can claim
 * any actor — for local development and tests only. {@code boot.AuthProducer} uses it only while
 * {@code syncular.auth.jwt.*} is not configured. Outside dev/test it refuses to start unless
 * {@code syncular.dev-auth.enabled=true} is set explicitly ({@link DevAuthStartupCheck}). Header values follow the
 * same rule as token claims ({@link ClaimText}): used as sent, or refused with 401 {@code details.reason}
 * {@code invalid_claim} naming the header in {@code details.claim}; never trimmed.
 */
public class DevHeaderAuthenticator implements Authenticator {
    public static final String ACTOR_HEADER = "x-actor-id";
    public static final String PARTITION_HEADER = "x-syncular-partition";

    private final String defaultPartition;

    public DevHeaderAuthenticator(DevAuthConfig config) {
        this.defaultPartition = config.partition();
    }

    @Override
    public Uni<SyncRequestContext> authenticate(HttpServerRequest request) {
        String actor = request.getHeader(ACTOR_HEADER);
        if (actor == null || actor.isEmpty()) {
            return Uni.createFrom().failure(new SyncError(ErrorCode.AUTH_REQUIRED, "authentication required"));
        }
        String partition = request.getHeader(PARTITION_HEADER);
        if (partition != null && partition.isEmpty()) {
            partition = null;
        }
        // used exactly as sent or refused, never trimmed ("alice\u0000" or " alice " must not become alice)
        for (String[] header : new String[][] {{ACTOR_HEADER, actor}, {PARTITION_HEADER, partition}}) {
            if (header[1] != null && !ClaimText.clean(header[1])) {
                return Uni.createFrom().failure(TokenRejection.INVALID_CLAIM.error(header[0]));
            }
        }
        return Uni.createFrom().item(new SyncRequestContext(actor, partition == null ? defaultPartition : partition));
    }
}
