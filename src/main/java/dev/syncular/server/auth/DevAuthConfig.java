package dev.syncular.server.auth;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.util.Optional;

/**
 * The built-in development authentication ({@code auth.DevHeaderAuthenticator} +
 * {@code auth.ConfiguredScopeResolver}). It trusts the {@code x-actor-id} header — never expose it.
 */
@ConfigMapping(prefix = "syncular.dev-auth")
public interface DevAuthConfig {
    /**
     * Whether the dev pair may serve requests. Defaults to {@code true}; the prod profile sets
     * {@code false} (application.properties), and a prod server whose active authenticator is still the
     * dev one refuses to start unless this is set to {@code true} explicitly.
     */
    @WithDefault("true")
    boolean enabled();

    /** Partition used when the request carries no {@code x-syncular-partition} header. */
    @WithDefault("default")
    String partition();

    /**
     * Allowed scopes of every actor (§3.2), as a JSON object of variable → array of values, e.g.
     * {@code {"list_id":["l1","l2"]}}; {@code "*"} allows any value. Unset = {@code ["*"]} for every
     * scope variable the schema declares.
     */
    Optional<String> allowedScopes();
}
