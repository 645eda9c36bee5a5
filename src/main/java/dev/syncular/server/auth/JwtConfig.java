package dev.syncular.server.auth;

import io.quarkus.runtime.configuration.MemorySize;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * JWT bearer authentication ({@code auth.JwtAuthenticator}), active as soon as one key source is set:
 * {@code jwks-url}, {@code public-key} or {@code public-key-location}. It then replaces the development
 * authentication. See docs/AUTHENTICATION.md.
 */
@ConfigMapping(prefix = "syncular.auth.jwt")
public interface JwtConfig {
    /** URL of the issuer's JSON Web Key Set, e.g. {@code https://idp.example.com/.well-known/jwks.json}. */
    Optional<String> jwksUrl();

    /** The verification key itself: a PEM public key ({@code -----BEGIN PUBLIC KEY-----...}), or a JWK/JWKS. */
    Optional<String> publicKey();

    /** A file (path, {@code file:} or {@code classpath:} URL) holding a PEM public key or a JWK/JWKS. */
    Optional<String> publicKeyLocation();

    /** Required {@code iss} value; unset = the issuer is not checked. */
    Optional<String> issuer();

    /** Accepted {@code aud} values (the token must name at least one); unset = the audience is not checked. */
    Optional<List<String>> audience();

    /** Tolerance applied to {@code exp}, {@code nbf} and {@code iat} (a token is valid until {@code exp} + skew). */
    @WithDefault("30s")
    Duration clockSkew();

    /** Accepted signature algorithms ({@code RS256}, {@code RS384}, {@code RS512}, {@code PS256}, {@code ES256}, ...). */
    @WithDefault("RS256")
    List<String> signatureAlgorithms();

    /** How often the JWKS is re-fetched in the background (keys are fetched at start-up, then cached). */
    @WithDefault("60m")
    Duration jwksRefreshInterval();

    /**
     * Least time between two fetches caused by tokens naming an unknown {@code kid} (one per interval, shared by
     * every request waiting for it); also the retry delay after a failed fetch.
     */
    @WithDefault("30s")
    Duration jwksMinRefetchInterval();

    /** Bound on one JWKS fetch: connecting, the answer's headers and its whole body. */
    @WithDefault("5s")
    Duration jwksFetchTimeout();

    /** Cap on the size of a JWKS answer; a larger one fails the fetch (the last good key set stays). */
    @WithDefault("256K")
    MemorySize jwksMaxBytes();

    /** Claim holding the actor id (a string). */
    @WithDefault("sub")
    String actorClaim();

    /** Claim holding the partition (a string); unset = every token gets {@code partition}. */
    Optional<String> partitionClaim();

    /** The partition when {@code partition-claim} is unset. */
    @WithDefault("default")
    String partition();

    /** Claim holding the allowed scopes as a JSON object of scope variable → array of values. */
    @WithDefault("syncular_scopes")
    String scopesClaim();

    /**
     * Scope variables read from individual claims: {@code syncular.auth.jwt.scope-claims.<variable>=<claim>};
     * the claim is a string or an array of strings. Merged with {@code scopes-claim}.
     */
    Map<String, String> scopeClaims();

    /** Whether a key source is configured, i.e. whether JWT authentication is active. */
    default boolean configured() {
        return jwksUrl().isPresent()
                || publicKey().isPresent()
                || publicKeyLocation().isPresent();
    }
}
