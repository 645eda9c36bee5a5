package dev.syncular.server.auth;

import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.configuration.ConfigurationException;
import io.smallrye.jwt.util.KeyUtils;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Where {@link JwtAuthenticator} gets its verification keys: a fixed set from {@code public-key} /
 * {@code public-key-location}, or the {@link JwksCache} of {@code jwks-url}.
 */
interface JwtKeySource extends AutoCloseable {
    /**
     * The key set to verify a token naming {@code kid} ({@code null}: none) with: completed at once when the key
     * is known (or cannot be looked up again yet), else after the one shared refetch. Fails with the
     * {@link TokenRejection#KEYS_UNAVAILABLE} error when no key set was ever loaded.
     */
    CompletableFuture<VerificationKeys> keysFor(String kid);

    @Override
    default void close() {}

    /** A fixed key set. */
    static JwtKeySource fixed(VerificationKeys keys) {
        CompletableFuture<VerificationKeys> answer = CompletableFuture.completedFuture(keys);
        return kid -> answer;
    }

    /**
     * The key source {@code syncular.auth.jwt.*} names; a wrong combination or a static key that does not parse
     * fails start-up naming the properties. A JWKS cache starts fetching at once.
     */
    static JwtKeySource of(JwtConfig config, Clock clock, MeterRegistry registry) {
        int sources = (config.jwksUrl().isPresent() ? 1 : 0)
                + (config.publicKey().isPresent() ? 1 : 0)
                + (config.publicKeyLocation().isPresent() ? 1 : 0);
        if (sources != 1) {
            throw new ConfigurationException(
                    "Set exactly one of syncular.auth.jwt.jwks-url, syncular.auth.jwt.public-key "
                            + "and syncular.auth.jwt.public-key-location (found " + sources + ")");
        }
        if (config.publicKey().isPresent()) {
            return fixed(staticKeys(config.publicKey().get(), "syncular.auth.jwt.public-key"));
        }
        if (config.publicKeyLocation().isPresent()) {
            String location = config.publicKeyLocation().get().trim();
            String content;
            try {
                content = KeyUtils.readKeyContent(location);
            } catch (Exception e) {
                content = null;
            }
            if (content == null) {
                throw new ConfigurationException("syncular.auth.jwt.public-key-location: cannot read " + location);
            }
            return fixed(staticKeys(content, "syncular.auth.jwt.public-key-location"));
        }
        URI uri;
        try {
            uri = URI.create(config.jwksUrl().get().trim());
        } catch (IllegalArgumentException e) {
            uri = null;
        }
        if (uri == null
                || !("https".equalsIgnoreCase(uri.getScheme()) || "http".equalsIgnoreCase(uri.getScheme()))
                || uri.getHost() == null) {
            throw new ConfigurationException("syncular.auth.jwt.jwks-url is not an http(s) URL");
        }
        for (Duration d :
                List.of(config.jwksRefreshInterval(), config.jwksMinRefetchInterval(), config.jwksFetchTimeout())) {
            if (d.isNegative() || d.isZero()) {
                throw new ConfigurationException("syncular.auth.jwt.jwks-refresh-interval, jwks-min-refetch-interval "
                        + "and jwks-fetch-timeout must be positive");
            }
        }
        if (config.jwksMaxBytes().asLongValue() <= 0) {
            throw new ConfigurationException("syncular.auth.jwt.jwks-max-bytes must be positive");
        }
        return new JwksCache(
                        uri,
                        config.jwksRefreshInterval(),
                        config.jwksMinRefetchInterval(),
                        config.jwksFetchTimeout(),
                        config.jwksMaxBytes().asLongValue(),
                        clock,
                        registry)
                .start();
    }

    /** A static key must parse now, so a broken key stops start-up instead of answering every request 401. */
    private static VerificationKeys staticKeys(String content, String property) {
        try {
            return VerificationKeys.fromText(content);
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException(property + " is not a PEM public key or a JWK/JWKS document");
        }
    }
}
