package dev.syncular.server.auth;

import dev.syncular.server.config.SyncularConfig;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.sync.ScopeResolver;
import io.quarkus.arc.DefaultBean;
import jakarta.enterprise.context.ApplicationScoped;
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
public class BuiltInAuth {

    @Produces
    @DefaultBean
    @Singleton
    Authenticator authenticator(SyncularConfig config) {
        return config.auth().jwt().configured() ? new JwtAuthenticator(config.auth().jwt())
                : new DevHeaderAuthenticator(config);
    }

    @Produces
    @DefaultBean
    @Singleton
    ScopeResolver scopeResolver(SyncularConfig config, SchemaWindow window) {
        return config.auth().jwt().configured() ? new JwtScopeResolver() : new ConfiguredScopeResolver(config, window);
    }
}
