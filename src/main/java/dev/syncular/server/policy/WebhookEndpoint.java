package dev.syncular.server.policy;

import dev.syncular.server.config.ByteSize;
import dev.syncular.server.config.DurationRange;
import io.quarkus.runtime.configuration.MemorySize;
import jakarta.validation.constraints.Min;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A signed webhook endpoint: a JSON {@code POST} signed with {@code Syncular-Signature} (HMAC-SHA256 under
 * {@code secret}), every call bounded. One shape for every webhook the server calls — the whole-commit validator
 * ({@code syncular.policy.validator-webhook.*}), the default reaction webhook ({@code syncular.reactions.webhook.*})
 * and the per-type reaction endpoints ({@code syncular.reactions.endpoints.<name>.*}); each use declares its own
 * defaults by overriding the methods. Checked at start-up: the bounds by their constraints, and a set {@code url}
 * is an absolute http(s) URL that comes with a {@code secret} ({@link #problems}, at start-up).
 */
public interface WebhookEndpoint {
    /** The endpoint; unset or blank = this webhook is off. */
    Optional<String> url();

    /** HMAC-SHA256 key of the {@code Syncular-Signature} header (required with a url). */
    Optional<String> secret();

    /** Hard limit of one whole call. */
    @DurationRange(min = DurationRange.MORE_THAN_ZERO, message = "must be more than 0s")
    Duration timeout();

    /** TCP connect to the endpoint, and the wait for a free pooled connection. */
    @DurationRange(min = DurationRange.MORE_THAN_ZERO, message = "must be more than 0s")
    Duration connectTimeout();

    /** The longest silence while the answer is awaited or read; then the call is cut. */
    @DurationRange(min = DurationRange.MORE_THAN_ZERO, message = "must be more than 0s")
    Duration readTimeout();

    /** Connections to the endpoint, at most (calls beyond wait up to {@code connect-timeout}). */
    @Min(value = 1, message = "must be 1 or more")
    int poolSize();

    /** The answer's body, at most; a longer one fails the call. */
    @ByteSize(min = 1, message = "must be more than 0")
    MemorySize maxAnswerSize();

    /** Consecutive failures (no answer, 5xx) that open the circuit breaker; {@code 0} = no breaker. */
    @Min(value = 0, message = "must be 0 (no breaker) or more")
    int breakerFailures();

    /** How long an open breaker fails calls at once (no call) before one trial call is let through. */
    Duration breakerOpenFor();

    /** Whether a url is set, i.e. whether this webhook is on. */
    default boolean configured() {
        return url().filter(u -> !u.isBlank()).isPresent();
    }

    /**
     * The one check of a webhook that spans its values, run at start-up ({@code boot.ConfigChecks}): a set
     * {@code url} is an absolute http(s) URL and comes with a {@code secret}, and a breaker that can open has an
     * open time. Each problem names its property under {@code p}.
     */
    static List<String> problems(String p, WebhookEndpoint hook) {
        List<String> out = new ArrayList<>();
        if (!hook.configured()) {
            return out;
        }
        String url = hook.url().get().trim();
        boolean absolute;
        try {
            URI uri = new URI(url);
            absolute = ("http".equalsIgnoreCase(uri.getScheme()) || "https".equalsIgnoreCase(uri.getScheme()))
                    && uri.getHost() != null;
        } catch (URISyntaxException e) {
            absolute = false;
        }
        if (!absolute) {
            out.add(p + ".url must be an absolute http(s) URL, was " + url);
        }
        if (hook.secret().filter(s -> !s.isBlank()).isEmpty()) {
            out.add(p + ".secret is required with " + p + ".url (the HMAC-SHA256 key of Syncular-Signature)");
        }
        if (hook.breakerFailures() > 0
                && (hook.breakerOpenFor().isZero() || hook.breakerOpenFor().isNegative())) {
            out.add(p + ".breaker-open-for must be more than 0s while " + p + ".breaker-failures is set, was "
                    + hook.breakerOpenFor());
        }
        return out;
    }
}
