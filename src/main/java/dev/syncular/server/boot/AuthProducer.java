package dev.syncular.server.boot;

import dev.syncular.server.auth.Authenticator;
import dev.syncular.server.auth.ConfiguredScopeResolver;
import dev.syncular.server.auth.DevAuthConfig;
import dev.syncular.server.auth.DevAuthStartupCheck;
import dev.syncular.server.auth.DevHeaderAuthenticator;
import dev.syncular.server.auth.JwtAuthenticator;
import dev.syncular.server.auth.JwtConfig;
import dev.syncular.server.auth.JwtScopeResolver;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.sync.ScopeResolver;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.arc.DefaultBean;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/**
 * Chooses the built-in authentication at run time, so one image serves every deployment: JWT
 * ({@link JwtAuthenticator} + {@link JwtScopeResolver}) when {@code syncular.auth.jwt} has a key source, else
 * the development pair ({@link DevHeaderAuthenticator} + {@link ConfiguredScopeResolver}), which
 * {@link DevAuthStartupCheck} keeps out of prod unless enabled explicitly. Both producers are
 * {@code @DefaultBean}s: a host's own {@link Authenticator} / {@link ScopeResolver} bean replaces them.
 */
@ApplicationScoped
public class AuthProducer {

    @Produces
    @DefaultBean
    @Singleton
    Authenticator authenticator(JwtConfig jwt, DevAuthConfig devAuth, MeterRegistry registry) {
        return jwt.configured() ? JwtAuthenticator.fromConfig(jwt, registry) : new DevHeaderAuthenticator(devAuth);
    }

    /** Stops the JWKS refresh of a JWT authenticator when the application shuts down. */
    void close(@Disposes Authenticator authenticator) {
        if (authenticator instanceof JwtAuthenticator jwt) {
            jwt.close();
        }
    }

    @Produces
    @DefaultBean
    @Singleton
    ScopeResolver scopeResolver(JwtConfig jwt, DevAuthConfig devAuth, SchemaWindow window) {
        return jwt.configured() ? new JwtScopeResolver() : new ConfiguredScopeResolver(devAuth, window);
    }
}
