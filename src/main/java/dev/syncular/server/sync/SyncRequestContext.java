package dev.syncular.server.sync;

import dev.syncular.server.errors.SyncError;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What host authentication established for one request (§1.1): the actor and its partition, plus — when the
 * credential itself carries them (e.g. a JWT claim, {@code auth.JwtAuthenticator}) — the allowed scopes it
 * grants, which a {@link ScopeResolver} may read through {@link ScopeResolver#resolveScopes(SyncRequestContext)}.
 *
 * @param grantedScopes allowed scopes carried by the credential (variable → values, {@code "*"} = any), or
 *     {@code null} when the authenticator carries none
 * @param credentialExpiresAtMs when the credential stops being accepted (epoch milliseconds, e.g. a JWT's
 *     {@code exp} plus the configured clock skew), or {@link #NO_EXPIRY} for a credential without a lifetime; a
 *     long-lived binding (the §8 realtime socket) ends its connection at this instant
 */
public record SyncRequestContext(
        String actorId, String partition, Map<String, List<String>> grantedScopes, long credentialExpiresAtMs) {
    /** {@link #credentialExpiresAtMs()} of a credential that does not expire (the development header). */
    public static final long NO_EXPIRY = Long.MAX_VALUE;

    public SyncRequestContext {
        Objects.requireNonNull(actorId, "actorId");
        Objects.requireNonNull(partition, "partition");
        grantedScopes = grantedScopes == null ? null : Map.copyOf(grantedScopes);
    }

    /** A context whose credential carries scopes but no lifetime. */
    public SyncRequestContext(String actorId, String partition, Map<String, List<String>> grantedScopes) {
        this(actorId, partition, grantedScopes, NO_EXPIRY);
    }

    /** A context whose credential carries no scopes (the resolver decides from actor and partition alone). */
    public SyncRequestContext(String actorId, String partition) {
        this(actorId, partition, null, NO_EXPIRY);
    }

    /**
     * 400 {@code sync.invalid_request} when the storage cannot key on this partition or actor (U+0000, or longer
     * than {@code StorableText#MAX_KEY_BYTES}) — an authenticator passes on whatever its credential says, and
     * the development one takes both from request headers — else {@code null}. Checked before any storage read.
     */
    public SyncError unstorable() {
        SyncError e = RequestValidation.unstorableKey(partition, "partition", -1);
        return e != null ? e : RequestValidation.unstorableKey(actorId, "actorId", -1);
    }
}
