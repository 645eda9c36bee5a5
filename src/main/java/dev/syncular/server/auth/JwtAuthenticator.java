package dev.syncular.server.auth;

import dev.syncular.server.config.SyncularConfig;
import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.sync.SyncRequestContext;
import io.quarkus.runtime.configuration.ConfigurationException;
import io.smallrye.jwt.KeyFormat;
import io.smallrye.jwt.algorithm.SignatureAlgorithm;
import io.smallrye.jwt.auth.principal.DefaultJWTParser;
import io.smallrye.jwt.auth.principal.JWTAuthContextInfo;
import io.smallrye.jwt.auth.principal.JWTParser;
import io.smallrye.jwt.auth.principal.ParseException;
import io.smallrye.jwt.util.KeyUtils;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import io.vertx.core.http.HttpServerRequest;
import jakarta.json.JsonArray;
import jakarta.json.JsonObject;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.eclipse.microprofile.jwt.JsonWebToken;
import org.jboss.logging.Logger;
import org.jose4j.jwt.consumer.InvalidJwtException;

/**
 * JWT bearer authentication from configuration ({@code syncular.auth.jwt.*}, docs/AUTHENTICATION.md): the
 * {@code Authorization: Bearer <token>} header is verified programmatically with smallrye-jwt's
 * {@link JWTParser} — signature against a JWKS URL or a configured public key, {@code exp}/{@code iat}/{@code nbf}
 * with a clock skew, {@code iss} and {@code aud} when configured. The actor comes from {@code actor-claim}, the
 * partition from {@code partition-claim} or the fixed {@code partition}, the allowed scopes from
 * {@code scopes-claim} and {@code scope-claims.<variable>}; they travel in
 * {@link SyncRequestContext#grantedScopes()} to {@link JwtScopeResolver}.
 *
 * <p>Failures are §10 catalogue errors with static messages and no details (never the token): a missing or
 * unusable header, a bad signature, an expired token, a wrong issuer or audience, or a missing actor/partition
 * claim → 401 {@code sync.auth_required}; a scopes claim of the wrong shape → 403 {@code sync.forbidden}.
 *
 * <p>Threading: with a JWKS URL, verification may fetch keys over HTTP, so it runs on the worker pool; with a
 * static key it runs on the calling thread (a signature check, no I/O).
 */
public final class JwtAuthenticator implements Authenticator {
    private static final Logger LOG = Logger.getLogger(JwtAuthenticator.class);
    static final String MISSING = "authentication required";
    static final String INVALID = "invalid or expired token";
    static final String BAD_SCOPES = "token scopes claim is malformed";

    private final JWTParser parser;
    private final JWTAuthContextInfo info;
    private final boolean remoteKeys;
    private final String actorClaim;
    private final String partitionClaim;
    private final String partition;
    private final String scopesClaim;
    private final Map<String, String> scopeClaims;

    public JwtAuthenticator(SyncularConfig.Jwt config) {
        this.info = contextInfo(config);
        this.parser = new DefaultJWTParser(info);
        this.remoteKeys = config.jwksUrl().isPresent();
        this.actorClaim = config.actorClaim();
        this.partitionClaim = config.partitionClaim().orElse(null);
        this.partition = config.partition();
        this.scopesClaim = config.scopesClaim();
        this.scopeClaims = Map.copyOf(config.scopeClaims());
    }

    /** Translates {@code syncular.auth.jwt.*}; a wrong combination fails start-up naming the properties. */
    static JWTAuthContextInfo contextInfo(SyncularConfig.Jwt config) {
        int sources = (config.jwksUrl().isPresent() ? 1 : 0) + (config.publicKey().isPresent() ? 1 : 0)
                + (config.publicKeyLocation().isPresent() ? 1 : 0);
        if (sources != 1) {
            throw new ConfigurationException("Set exactly one of syncular.auth.jwt.jwks-url, syncular.auth.jwt.public-key "
                    + "and syncular.auth.jwt.public-key-location (found " + sources + ")");
        }
        JWTAuthContextInfo info = new JWTAuthContextInfo();
        config.jwksUrl().ifPresent(url -> {
            info.setPublicKeyLocation(url.trim());
            info.setKeyFormat(KeyFormat.JWK);
            info.setJwksRefreshInterval((int) Math.max(1, config.jwksRefreshInterval().toMinutes()));
        });
        config.publicKey().ifPresent(key -> {
            requireKey(key.trim(), "syncular.auth.jwt.public-key");
            info.setPublicKeyContent(key.trim());
        });
        config.publicKeyLocation().ifPresent(location -> {
            String content;
            try {
                content = KeyUtils.readKeyContent(location.trim());
            } catch (Exception e) {
                content = null;
            }
            if (content == null) {
                throw new ConfigurationException("syncular.auth.jwt.public-key-location: cannot read " + location);
            }
            requireKey(content.trim(), "syncular.auth.jwt.public-key-location");
            info.setPublicKeyLocation(location.trim());
        });
        config.issuer().ifPresent(info::setIssuedBy);
        config.audience().ifPresent(aud -> info.setExpectedAudience(Set.copyOf(aud)));
        int skew = (int) config.clockSkew().toSeconds();
        info.setClockSkew(skew);
        info.setExpGracePeriodSecs(skew);
        info.setRequireNamedPrincipal(false); // the actor claim is checked here, configurable
        Set<SignatureAlgorithm> algorithms = EnumSet.noneOf(SignatureAlgorithm.class);
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
            algorithms.add(algorithm);
        }
        info.setSignatureAlgorithm(algorithms);
        return info;
    }

    /** A static key must parse now, so a broken key stops start-up instead of answering every request 401. */
    private static void requireKey(String content, String property) {
        try {
            if (content.startsWith("{")) {
                if (KeyUtils.loadJsonWebKeys(content) == null || KeyUtils.loadJsonWebKeys(content).isEmpty()) {
                    throw new IllegalArgumentException("no keys");
                }
            } else {
                KeyUtils.decodePublicKey(content);
            }
        } catch (Exception e) {
            throw new ConfigurationException(property + " is not a PEM public key or a JWK/JWKS document");
        }
    }

    @Override
    public Uni<SyncRequestContext> authenticate(HttpServerRequest request) {
        String token = bearer(request.getHeader("Authorization"));
        if (token == null) {
            return Uni.createFrom().failure(new SyncError(ErrorCode.AUTH_REQUIRED, MISSING));
        }
        Uni<SyncRequestContext> verified = Uni.createFrom().item(() -> verify(token));
        return remoteKeys ? verified.runSubscriptionOn(Infrastructure.getDefaultWorkerPool()) : verified;
    }

    /** Verifies the token and maps its claims; throws a {@link SyncError} on any failure. */
    SyncRequestContext verify(String token) {
        JsonWebToken jwt;
        try {
            jwt = parser.parse(token, info);
        } catch (ParseException | RuntimeException e) {
            if (LOG.isDebugEnabled()) {
                LOG.debugf("JWT rejected: %s", reason(e));
            }
            throw new SyncError(ErrorCode.AUTH_REQUIRED, INVALID);
        }
        String actor = text(jwt.getClaim(actorClaim));
        if (actor == null) {
            LOG.debugf("JWT rejected: no string claim %s (actor)", actorClaim);
            throw new SyncError(ErrorCode.AUTH_REQUIRED, INVALID);
        }
        String p = partition;
        if (partitionClaim != null) {
            p = text(jwt.getClaim(partitionClaim));
            if (p == null) {
                LOG.debugf("JWT rejected: no string claim %s (partition)", partitionClaim);
                throw new SyncError(ErrorCode.AUTH_REQUIRED, INVALID);
            }
        }
        long exp = jwt.getExpirationTime();
        return new SyncRequestContext(actor, p, scopes(jwt),
                exp > 0 && exp < SyncRequestContext.NO_EXPIRY / 1000 ? exp * 1000 : SyncRequestContext.NO_EXPIRY);
    }

    /** The allowed scopes the token grants: {@code scopes-claim} merged with {@code scope-claims.*}; none = empty. */
    Map<String, List<String>> scopes(JsonWebToken jwt) {
        Map<String, Set<String>> out = new LinkedHashMap<>();
        Object object = jwt.getClaim(scopesClaim);
        if (object != null) {
            if (!(object instanceof JsonObject map)) {
                throw new SyncError(ErrorCode.FORBIDDEN, BAD_SCOPES);
            }
            for (Map.Entry<String, JsonValue> e : map.entrySet()) {
                List<String> values = values(e.getValue());
                if (values == null) {
                    throw new SyncError(ErrorCode.FORBIDDEN, BAD_SCOPES);
                }
                out.computeIfAbsent(e.getKey(), k -> new LinkedHashSet<>()).addAll(values);
            }
        }
        for (Map.Entry<String, String> e : scopeClaims.entrySet()) {
            Object claim = jwt.getClaim(e.getValue());
            if (claim == null) {
                continue;
            }
            List<String> values = values(claim);
            if (values == null) {
                throw new SyncError(ErrorCode.FORBIDDEN, BAD_SCOPES);
            }
            out.computeIfAbsent(e.getKey(), k -> new LinkedHashSet<>()).addAll(values);
        }
        Map<String, List<String>> result = new LinkedHashMap<>();
        out.forEach((k, v) -> result.put(k, List.copyOf(v)));
        return result;
    }

    /** A string or an array of strings (JSON-P or Java collection); anything else is {@code null}. */
    private static List<String> values(Object v) {
        if (v instanceof String s) {
            return List.of(s);
        }
        if (v instanceof JsonString s) {
            return List.of(s.getString());
        }
        if (v instanceof JsonArray a) {
            List<String> out = new ArrayList<>(a.size());
            for (JsonValue item : a) {
                if (!(item instanceof JsonString s)) {
                    return null;
                }
                out.add(s.getString());
            }
            return out;
        }
        if (v instanceof Collection<?> c) {
            List<String> out = new ArrayList<>(c.size());
            for (Object item : c) {
                String s = item instanceof JsonString js ? js.getString() : item instanceof String str ? str : null;
                if (s == null) {
                    return null;
                }
                out.add(s);
            }
            return out;
        }
        return null;
    }

    private static String text(Object claim) {
        String s = claim instanceof String str ? str : claim instanceof JsonString js ? js.getString() : null;
        if (s == null || s.isBlank()) {
            return null;
        }
        return s.trim();
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

    /** jose4j's validation details (claim names and expected values; never the token), else the exception type. */
    private static String reason(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof InvalidJwtException invalid && invalid.getErrorDetails() != null
                    && !invalid.getErrorDetails().isEmpty()) {
                List<String> details = new ArrayList<>();
                invalid.getErrorDetails().forEach(d -> details.add(d.getErrorMessage()));
                return String.join("; ", details);
            }
        }
        return e.getClass().getSimpleName();
    }
}
