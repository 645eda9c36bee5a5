package dev.syncular.server.auth;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import java.util.Map;

/**
 * Why a bearer token was refused: the static code a 401 {@code sync.auth_required} carries in
 * {@code details.reason} (§10.1: codes and messages are static, values go in {@code details}; here not even
 * values: never the token, never a claim's value). {@link #MISSING_CLAIM} and {@link #INVALID_CLAIM} also name
 * the claim in {@code details.claim}; {@link #EXPIRED} and {@link #NOT_YET_VALID} name the time claim that failed.
 * The codes are listed in docs/AUTHENTICATION.md.
 */
public enum TokenRejection {
    /** No {@code Authorization: Bearer} credential. */
    MISSING_TOKEN("missing_token", "authentication required"),
    /** Not a compact JWS: not three base64url parts, a header or payload that is not a JSON object, ... */
    MALFORMED("malformed", "token is not a well-formed JWS"),
    /** {@code alg} is {@code none} or not in {@code syncular.auth.jwt.signature-algorithms}. */
    ALGORITHM("algorithm", "token signature algorithm is not accepted"),
    /** No verification key matches the token's {@code kid} (after the one shared refetch, when there is one). */
    UNKNOWN_KEY("unknown_key", "token signing key is unknown"),
    /** No key set could ever be loaded from the JWKS URL. */
    KEYS_UNAVAILABLE("keys_unavailable", "token signing keys are unavailable"),
    /** The signature does not verify with the key. */
    SIGNATURE("signature", "token signature is invalid"),
    /** {@code exp} (plus the clock skew) has passed. */
    EXPIRED("expired", "token has expired"),
    /** {@code nbf} or {@code iat} (minus the clock skew) lies in the future. */
    NOT_YET_VALID("not_yet_valid", "token is not yet valid"),
    /** {@code iss} is not the configured issuer. */
    ISSUER("issuer", "token issuer is not accepted"),
    /** {@code aud} names none of the configured audiences. */
    AUDIENCE("audience", "token audience is not accepted"),
    /** A required claim is absent ({@code details.claim}). */
    MISSING_CLAIM("missing_claim", "token lacks a required claim"),
    /** A claim has the wrong type or an unusable value, e.g. control characters ({@code details.claim}). */
    INVALID_CLAIM("invalid_claim", "token claim has an invalid value");

    /** The {@code details.reason} code. */
    public final String code;
    /** The static message of the 401. */
    public final String message;

    TokenRejection(String code, String message) {
        this.code = code;
        this.message = message;
    }

    /** The 401 {@code sync.auth_required} with {@code details.reason}. */
    public SyncError error() {
        return new SyncError(ErrorCode.AUTH_REQUIRED, message, Map.of("reason", code));
    }

    /** The 401 {@code sync.auth_required} with {@code details.reason} and {@code details.claim} (a claim's name). */
    public SyncError error(String claim) {
        return new SyncError(ErrorCode.AUTH_REQUIRED, message, Map.of("reason", code, "claim", claim));
    }

    /** The reason a {@link SyncError} from {@link #error} carries, else {@code null}. */
    static TokenRejection of(SyncError e) {
        Object reason = e.details().get("reason");
        for (TokenRejection r : values()) {
            if (r.code.equals(reason)) {
                return r;
            }
        }
        return null;
    }
}
