package dev.syncular.server.auth;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.sync.SyncRequestContext;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.configuration.ConfigurationException;
import io.smallrye.jwt.algorithm.SignatureAlgorithm;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import io.vertx.core.http.HttpServerRequest;
import java.security.PublicKey;
import java.time.Clock;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.jboss.logging.Logger;
import org.jose4j.jwa.AlgorithmConstraints;
import org.jose4j.jws.JsonWebSignature;
import org.jose4j.lang.JoseException;

/**
 * JWT bearer authentication from configuration ({@code syncular.auth.jwt.*}, docs/AUTHENTICATION.md). The
 * {@code Authorization: Bearer <token>} header is checked in this order, each failure a 401
 * {@code sync.auth_required} whose {@code details.reason} names it ({@link TokenRejection}; never the token or a
 * claim's value):
 * <ol>
 *   <li>syntax ({@link CompactJws}): a compact JWS with an accepted {@code alg}, refused before any key lookup;</li>
 *   <li>the key: by {@code kid} from the {@link JwtKeySource} (a static key, or the {@link JwksCache}, which
 *       answers known keys at once and refetches at most once per interval for unknown ones);</li>
 *   <li>the signature, with jose4j and an algorithm allow-list (no {@code none}, no {@code HS*}; header keys such
 *       as {@code jwk}/{@code jku}/{@code x5u} are never used);</li>
 *   <li>the claims: {@code exp} required, {@code nbf} and {@code iat} optional (RFC 7519 §4.1), all with the
 *       configured clock skew; {@code iss} and {@code aud} when configured; the actor from {@code actor-claim},
 *       the partition from {@code partition-claim} or the fixed {@code partition}, the allowed scopes from
 *       {@code scopes-claim} and {@code scope-claims.<variable>} (into {@link SyncRequestContext#grantedScopes()},
 *       read by {@link JwtScopeResolver}). Identity text is used as sent or refused ({@link ClaimText}).</li>
 * </ol>
 * A scopes claim of the wrong shape is 403 {@code sync.forbidden} (the token is genuine; its grant is unusable).
 *
 * <p>Threading: a known key is verified on the calling thread (a signature check, no I/O); a request that waits
 * for a key refetch resumes on the worker pool. Nothing here blocks.
 */
public final class JwtAuthenticator implements Authenticator, AutoCloseable {
    private static final Logger LOG = Logger.getLogger(JwtAuthenticator.class);
    static final String BAD_SCOPES = "token scopes claim is malformed";

    private final JwtKeySource keys;
    private final Clock clock;
    private final Set<String> algorithms;
    private final AlgorithmConstraints constraints;
    private final long skewMs;
    private final Optional<String> issuer;
    private final Set<String> audiences;
    private final String actorClaim;
    private final Optional<String> partitionClaim;
    private final String partition;
    private final String scopesClaim;
    private final Map<String, String> scopeClaims;
    private final Map<TokenRejection, Counter> rejections = new EnumMap<>(TokenRejection.class);

    public JwtAuthenticator(JwtConfig config, JwtKeySource keys, Clock clock, MeterRegistry registry) {
        this.keys = keys;
        this.clock = clock;
        this.algorithms = algorithms(config);
        this.constraints =
                new AlgorithmConstraints(AlgorithmConstraints.ConstraintType.PERMIT, algorithms.toArray(String[]::new));
        this.skewMs = config.clockSkew().toMillis();
        this.issuer = config.issuer();
        this.audiences = Set.copyOf(config.audience().orElse(List.of()));
        this.actorClaim = config.actorClaim();
        this.partitionClaim = config.partitionClaim();
        this.partition = config.partition();
        this.scopesClaim = config.scopesClaim();
        this.scopeClaims = Map.copyOf(config.scopeClaims());
        for (TokenRejection r : TokenRejection.values()) {
            rejections.put(
                    r,
                    Counter.builder("syncular.auth.rejections")
                            .tag("reason", r.code)
                            .description("Bearer tokens refused, by details.reason")
                            .register(registry));
        }
    }

    /** The authenticator {@code syncular.auth.jwt.*} configures; a wrong configuration fails start-up. */
    public static JwtAuthenticator fromConfig(JwtConfig config, MeterRegistry registry) {
        algorithms(config); // before any key source starts fetching
        return new JwtAuthenticator(
                config, JwtKeySource.of(config, Clock.systemUTC(), registry), Clock.systemUTC(), registry);
    }

    /** The JWS names of {@code signature-algorithms}; an unknown or symmetric one fails start-up. */
    static Set<String> algorithms(JwtConfig config) {
        Set<String> out = new LinkedHashSet<>();
        for (String name : config.signatureAlgorithms()) {
            SignatureAlgorithm algorithm;
            try {
                algorithm = SignatureAlgorithm.valueOf(name.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new ConfigurationException("syncular.auth.jwt.signature-algorithms: unknown algorithm " + name);
            }
            if (algorithm.name().startsWith("HS")) {
                throw new ConfigurationException("syncular.auth.jwt.signature-algorithms: " + name
                        + " is symmetric; only public-key algorithms are supported");
            }
            out.add(algorithm.getAlgorithm());
        }
        if (out.isEmpty()) {
            throw new ConfigurationException("syncular.auth.jwt.signature-algorithms: name at least one algorithm");
        }
        return Set.copyOf(out);
    }

    @Override
    public Uni<SyncRequestContext> authenticate(HttpServerRequest request) {
        return authenticateToken(bearer(request.getHeader("Authorization")));
    }

    /**
     * Authenticates a bearer token obtained some other way than the {@code Authorization} header ({@code null}:
     * none), with exactly the same checks.
     */
    public Uni<SyncRequestContext> authenticateToken(String token) {
        return verifiedToken(token, this::context);
    }

    /**
     * The claims of {@code token} once it passes the checks every credential of this server passes — signature,
     * {@code exp}/{@code nbf}/{@code iat}, issuer and audience — but not the actor, partition and scope mapping of a
     * sync credential: for a caller that reads other claims (the operator console's admin role). A rejection fails
     * the {@code Uni} with the same 401 {@code SyncError} as {@link #authenticateToken}.
     */
    public Uni<Map<String, Object>> verifiedClaims(String token) {
        return verifiedToken(token, claims -> {
            standardClaims(claims);
            return claims;
        });
    }

    private <T> Uni<T> verifiedToken(String token, java.util.function.Function<Map<String, Object>, T> accept) {
        CompactJws jws;
        CompletableFuture<VerificationKeys> lookup;
        try {
            if (token == null) {
                throw TokenRejection.MISSING_TOKEN.error();
            }
            jws = CompactJws.parse(token, algorithms);
            lookup = keys.keysFor(jws.kid());
        } catch (SyncError e) {
            return Uni.createFrom().failure(rejected(e));
        }
        Uni<T> verified = lookup.isDone()
                ? Uni.createFrom().item(() -> accept.apply(verify(jws, lookup)))
                : Uni.createFrom()
                        .completionStage(lookup.handle((k, e) -> jws))
                        .emitOn(Infrastructure.getDefaultWorkerPool())
                        .map(ignored -> accept.apply(verify(jws, lookup)));
        return verified.onFailure(SyncError.class).transform(e -> rejected((SyncError) e));
    }

    /** Verifies a token, waiting for its key when it must be fetched (tests and blocking callers). */
    SyncRequestContext verify(String token) {
        return authenticateToken(token).await().indefinitely();
    }

    /** The claims of a token whose signature verifies against the looked-up keys; throws the rejection. */
    private Map<String, Object> verify(CompactJws jws, CompletableFuture<VerificationKeys> lookup) {
        VerificationKeys set;
        try {
            set = lookup.join();
        } catch (CompletionException e) {
            throw e.getCause() instanceof SyncError s ? s : TokenRejection.KEYS_UNAVAILABLE.error();
        }
        List<PublicKey> candidates = set.candidates(jws.kid(), jws.alg());
        if (candidates.isEmpty()) {
            throw TokenRejection.UNKNOWN_KEY.error();
        }
        if (!signedByOneOf(jws, candidates)) {
            throw TokenRejection.SIGNATURE.error();
        }
        return jws.claims();
    }

    private boolean signedByOneOf(CompactJws jws, List<PublicKey> candidates) {
        for (PublicKey key : candidates) {
            JsonWebSignature signature = new JsonWebSignature();
            signature.setAlgorithmConstraints(constraints);
            try {
                signature.setCompactSerialization(jws.token());
                signature.setKey(key);
                if (signature.verifySignature()) {
                    return true;
                }
            } catch (JoseException | RuntimeException e) {
                // a key that does not fit (size, curve) verifies nothing; try the next one
            }
        }
        return false;
    }

    /** The claims of a token whose signature verified → the request context; throws the rejection. */
    SyncRequestContext context(Map<String, Object> claims) {
        long exp = standardClaims(claims);
        String actor = identity(claims, actorClaim);
        String p = partitionClaim.isPresent() ? identity(claims, partitionClaim.get()) : partition;
        // the instant this server starts refusing the token (exp + skew): a realtime socket authenticated with it
        // closes then, so a client reconnecting with the same token is refused rather than let in again
        return new SyncRequestContext(actor, p, scopes(claims), Math.min(exp + skewMs, SyncRequestContext.NO_EXPIRY));
    }

    /** The time, issuer and audience checks of every token; the item is {@code exp} (epoch ms). Throws the rejection. */
    private long standardClaims(Map<String, Object> claims) {
        long now = clock.millis();
        long exp = time(claims, "exp");
        if (exp == Long.MIN_VALUE) {
            throw TokenRejection.MISSING_CLAIM.error("exp");
        }
        if (now >= exp + skewMs) {
            throw TokenRejection.EXPIRED.error("exp");
        }
        for (String claim : List.of("nbf", "iat")) {
            long t = time(claims, claim);
            if (t != Long.MIN_VALUE && now < t - skewMs) {
                throw TokenRejection.NOT_YET_VALID.error(claim);
            }
        }
        if (issuer.isPresent()) {
            Object iss = claims.get("iss");
            if (iss == null) {
                throw TokenRejection.MISSING_CLAIM.error("iss");
            }
            if (!issuer.get().equals(iss)) {
                throw TokenRejection.ISSUER.error();
            }
        }
        if (!audiences.isEmpty()) {
            Object aud = claims.get("aud");
            if (aud == null) {
                throw TokenRejection.MISSING_CLAIM.error("aud");
            }
            List<String> named = values(aud);
            if (named == null) {
                throw TokenRejection.INVALID_CLAIM.error("aud");
            }
            if (named.stream().noneMatch(audiences::contains)) {
                throw TokenRejection.AUDIENCE.error();
            }
        }
        return exp;
    }

    /**
     * A NumericDate claim in epoch milliseconds (fractions allowed, RFC 7519 §2), {@link Long#MIN_VALUE} when
     * absent; any other type is INVALID_CLAIM. Far-away values are clamped so adding the skew cannot overflow.
     */
    private static long time(Map<String, Object> claims, String claim) {
        Object v = claims.get(claim);
        if (v == null) {
            return Long.MIN_VALUE;
        }
        if (!(v instanceof Number n)) {
            throw TokenRejection.INVALID_CLAIM.error(claim);
        }
        double seconds = n.doubleValue();
        double limit = Long.MAX_VALUE / 4_000.0;
        return seconds >= limit
                ? Long.MAX_VALUE / 4
                : seconds <= -limit ? -Long.MAX_VALUE / 4 : (long) (seconds * 1000);
    }

    /** The actor or partition: a string claim, used exactly as sent ({@link ClaimText#clean}). */
    private static String identity(Map<String, Object> claims, String claim) {
        Object v = claims.get(claim);
        if (v == null) {
            throw TokenRejection.MISSING_CLAIM.error(claim);
        }
        if (!(v instanceof String s) || !ClaimText.clean(s)) {
            throw TokenRejection.INVALID_CLAIM.error(claim);
        }
        return s;
    }

    /** The allowed scopes the token grants: {@code scopes-claim} merged with {@code scope-claims.*}; none = empty. */
    Map<String, List<String>> scopes(Map<String, Object> claims) {
        Map<String, Set<String>> out = new LinkedHashMap<>();
        Object object = claims.get(scopesClaim);
        if (object != null) {
            if (!(object instanceof Map<?, ?> map)) {
                throw new SyncError(ErrorCode.FORBIDDEN, BAD_SCOPES, Map.of("claim", scopesClaim));
            }
            for (Map.Entry<?, ?> e : map.entrySet()) {
                List<String> values = values(e.getValue());
                if (values == null) {
                    throw new SyncError(ErrorCode.FORBIDDEN, BAD_SCOPES, Map.of("claim", scopesClaim));
                }
                String variable = (String) e.getKey();
                requireClean(scopesClaim, variable, values);
                out.computeIfAbsent(variable, k -> new LinkedHashSet<>()).addAll(values);
            }
        }
        for (Map.Entry<String, String> e : scopeClaims.entrySet()) {
            Object claim = claims.get(e.getValue());
            if (claim == null) {
                continue;
            }
            List<String> values = values(claim);
            if (values == null) {
                throw new SyncError(ErrorCode.FORBIDDEN, BAD_SCOPES, Map.of("claim", e.getValue()));
            }
            requireClean(e.getValue(), e.getKey(), values);
            out.computeIfAbsent(e.getKey(), k -> new LinkedHashSet<>()).addAll(values);
        }
        Map<String, List<String>> result = new LinkedHashMap<>();
        out.forEach((k, v) -> result.put(k, List.copyOf(v)));
        return result;
    }

    private static void requireClean(String claim, String variable, List<String> values) {
        if (!ClaimText.clean(variable) || !values.stream().allMatch(ClaimText::cleanScopeText)) {
            throw TokenRejection.INVALID_CLAIM.error(claim);
        }
    }

    /** A string or an array of strings; anything else is {@code null}. */
    private static List<String> values(Object v) {
        if (v instanceof String s) {
            return List.of(s);
        }
        if (v instanceof List<?> list) {
            List<String> out = new ArrayList<>(list.size());
            for (Object item : list) {
                if (!(item instanceof String s)) {
                    return null;
                }
                out.add(s);
            }
            return out;
        }
        return null;
    }

    /** Counts the rejection and logs its reason at DEBUG (never the token). */
    private SyncError rejected(SyncError e) {
        TokenRejection reason = TokenRejection.of(e);
        if (reason != null) {
            rejections.get(reason).increment();
            if (LOG.isDebugEnabled()) {
                Object claim = e.details().get("claim");
                LOG.debugf("JWT rejected: %s%s", reason.code, claim == null ? "" : " (claim " + claim + ")");
            }
        }
        return e;
    }

    /** The token of {@code Authorization: Bearer <token>} (scheme case-insensitive), else {@code null}. */
    static String bearer(String header) {
        if (header == null) {
            return null;
        }
        String h = header.trim();
        if (h.length() <= 7 || !h.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return null;
        }
        String token = h.substring(7).trim();
        return token.isEmpty() ? null : token;
    }

    /** The key source in use (the {@link JwksCache} with a JWKS URL). */
    JwtKeySource keySource() {
        return keys;
    }

    @Override
    public void close() {
        keys.close();
    }
}
