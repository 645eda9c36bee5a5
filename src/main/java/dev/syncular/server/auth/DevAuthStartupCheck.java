package dev.syncular.server.auth;

import dev.syncular.server.config.ServesRequests;
import dev.syncular.server.sync.ScopeResolver;
import io.quarkus.arc.ClientProxy;
import io.quarkus.arc.InjectableInstance;
import io.quarkus.runtime.LaunchMode;
import io.quarkus.runtime.configuration.ConfigurationException;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.jboss.logging.Logger;

/**
 * Refuses to start when the built-in development auth pair ({@link DevHeaderAuthenticator},
 * {@link ConfiguredScopeResolver}) would serve requests without {@code syncular.dev-auth.enabled=true}.
 * The prod profile sets that flag to {@code false} in application.properties, so a production server
 * configures JWT ({@code syncular.auth.jwt.*}, which replaces the dev pair), provides its own
 * {@link Authenticator} and {@link ScopeResolver} beans, or opts in explicitly.
 * Runs right after the datasource check, before any schema work; not for a one-shot command, which serves no request.
 */
@ApplicationScoped
public class DevAuthStartupCheck {
    private static final Logger LOG = Logger.getLogger(DevAuthStartupCheck.class);

    static final String MESSAGE = "No production authentication is configured: the built-in development "
            + "authentication (%s) is active, but syncular.dev-auth.enabled is false. It trusts the x-actor-id "
            + "header and grants the configured scopes to anyone, so the prod profile does not enable it by "
            + "default. Configure JWT authentication with syncular.auth.jwt.jwks-url, syncular.auth.jwt.public-key "
            + "or syncular.auth.jwt.public-key-location (env SYNCULAR_AUTH_JWT_JWKS_URL, ...; see "
            + "docs/AUTHENTICATION.md), or provide your own CDI beans implementing "
            + "dev.syncular.server.auth.Authenticator and dev.syncular.server.sync.ScopeResolver, or set "
            + "syncular.dev-auth.enabled=true (env SYNCULAR_DEV_AUTH_ENABLED=true) to run with dev "
            + "authentication anyway.";

    @Inject
    InjectableInstance<Authenticator> authenticator;

    @Inject
    InjectableInstance<ScopeResolver> resolver;

    @Inject
    DevAuthConfig devAuth;

    @Inject
    JwtConfig jwt;

    /** Step 2 of {@code boot.StartupSequence}. */
    public void check() {
        if (!ServesRequests.thisProcess()) {
            return; // a command (the backfill) answers no request: how requests would be authenticated is moot
        }
        // Instantiating both now also fails start-up on a bad syncular.auth.jwt.* or dev-auth.allowed-scopes.
        Authenticator activeAuthenticator = ClientProxy.unwrap(authenticator.get());
        ScopeResolver activeResolver = ClientProxy.unwrap(resolver.get());
        boolean devAuthenticator = activeAuthenticator instanceof DevHeaderAuthenticator;
        boolean devResolver = activeResolver instanceof ConfiguredScopeResolver;
        verify(devAuthenticator, devResolver, devAuth.enabled(), LaunchMode.current() == LaunchMode.NORMAL);
        if (activeAuthenticator instanceof JwtAuthenticator) {
            LOG.infof(
                    "JWT authentication active (%s)", jwt.jwksUrl().isPresent() ? "JWKS URL" : "configured public key");
        }
    }

    /**
     * @param prod the application runs as a packaged (non dev/test) application
     * @throws ConfigurationException when a dev bean is active and dev auth is not enabled
     */
    static void verify(boolean devAuthenticator, boolean devResolver, boolean enabled, boolean prod) {
        if (!devAuthenticator && !devResolver) {
            return;
        }
        String which = devAuthenticator && devResolver
                ? "DevHeaderAuthenticator and ConfiguredScopeResolver"
                : devAuthenticator ? "DevHeaderAuthenticator" : "ConfiguredScopeResolver";
        if (!enabled) {
            throw new ConfigurationException(String.format(MESSAGE, which));
        }
        if (prod) {
            LOG.warnf(
                    "Development authentication (%s) is enabled by syncular.dev-auth.enabled=true: any client "
                            + "can act as any actor. Do not expose this server.",
                    which);
        }
    }
}
