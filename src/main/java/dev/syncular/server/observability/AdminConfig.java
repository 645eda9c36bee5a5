package dev.syncular.server.observability;

import dev.syncular.server.config.SecretKey;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import jakarta.validation.constraints.Min;
import java.util.Optional;

/**
 * {@code syncular.admin.*}: the admin API ({@code /admin/*}, enabled only when a bearer token is configured), its
 * sign-in throttle and this pod's ring of operational events; the console's sessions are {@code
 * console.ConsoleConfig} ({@code syncular.admin.console.*}).
 */
@ConfigMapping(prefix = "syncular.admin")
public interface AdminConfig {
    /** The admin API's bearer token and the console's sign-in; at least 32 bytes (issue 45: a short one is guessable). */
    Optional<@SecretKey String> token();

    /**
     * Wrong admin credentials (API token, console sign-in) one source address may present before it must wait,
     * 1 s doubling to 60 s after each further one, with 429 {@code sync.rate_limited} and {@code Retry-After}
     * ({@code http.CredentialAttempts}). {@code 0}: no throttle.
     */
    @WithDefault("5")
    @Min(value = 0, message = "must be 0 (off) or more")
    int freeAttempts();

    /** Size of this pod's in-memory ring of operational events ({@code GET <mount>/admin/events}). */
    @WithDefault("1000")
    int eventBuffer();
}
