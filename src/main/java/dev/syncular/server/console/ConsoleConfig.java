package dev.syncular.server.console;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.Optional;

/** {@code syncular.admin.console.*}: the operator console's sessions. */
@ConfigMapping(prefix = "syncular.admin.console")
public interface ConsoleConfig {
    /** How long a console sign-in lasts (fixed at sign-in; the session cookie and its stored row expire). */
    @WithDefault("30m")
    Duration sessionTtl();

    /**
     * Whether the session cookie carries {@code Secure} (sent over HTTPS only; browsers also keep it on
     * {@code http://localhost}). Turn off only for a console reached over plain HTTP on a trusted network.
     */
    @WithDefault("true")
    boolean secureCookie();

    /**
     * The role that signs a JWT in to the console (JWT authentication configured, {@code syncular.auth.jwt.*}):
     * a token that passes the server's JWT checks and whose {@link #roleClaim()} holds this value. Unset: the
     * console takes the admin token only.
     */
    Optional<String> role();

    /**
     * The claim holding the roles of a console JWT: a string or an array of strings; a dotted path walks nested
     * objects ({@code realm_access.roles}).
     */
    @WithDefault("roles")
    String roleClaim();
}
