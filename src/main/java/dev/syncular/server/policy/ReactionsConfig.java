package dev.syncular.server.policy;

import dev.syncular.server.config.ScheduleInterval;
import io.quarkus.runtime.configuration.MemorySize;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithConverter;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** {@code syncular.reactions.*}: delivery of durable reactions (§6.9) to a webhook. */
@ConfigMapping(prefix = "syncular.reactions")
public interface ReactionsConfig {
    /**
     * The webhook every reaction is delivered to ({@code syncular.reactions.webhook.*}); unset url = reactions
     * are stored but not delivered. (Until 0.x these were {@code syncular.reactions.webhook-url},
     * {@code webhook-secret}, {@code webhook-timeout}, ...: still read, with a start-up warning,
     * {@code config.RenamedProperties}.)
     */
    ReactionWebhook webhook();

    /**
     * A reaction endpoint's bounds. No circuit breaker by default: a delivery that fails is rescheduled with
     * backoff and spends one of its attempts (§6.9), which is the breaker; failing calls at once would spend
     * attempts without asking the endpoint.
     */
    interface ReactionWebhook extends WebhookEndpoint {
        /** Hard limit of one delivery call; a timeout is a retryable failure. */
        @Override
        @WithDefault("10s")
        Duration timeout();

        @Override
        @WithDefault("2s")
        Duration connectTimeout();

        @Override
        @WithDefault("10s")
        Duration readTimeout();

        /** Connections to each reaction endpoint, at most. */
        @Override
        @WithDefault("8")
        int poolSize();

        @Override
        @WithDefault("64K")
        MemorySize maxAnswerSize();

        @Override
        @WithDefault("0")
        int breakerFailures();

        @Override
        @WithDefault("10s")
        Duration breakerOpenFor();
    }

    /**
     * Named endpoints for chosen reaction types: a reaction whose type one of them lists goes there instead of
     * {@code webhook.url}. The name ({@code [a-z0-9]+}) only identifies the endpoint in the configuration.
     */
    Map<String, Endpoint> endpoints();

    /**
     * A webhook for the reaction types it lists ({@code url} required); every bound it does not set is the
     * default webhook's ({@code syncular.reactions.webhook.*}).
     */
    interface Endpoint extends WebhookEndpoint {
        /** The reaction types delivered here; a type may be listed by one endpoint only. */
        List<String> types();

        /** HMAC-SHA256 key of its {@code Syncular-Signature} header; unset: {@code webhook.secret}. */
        @Override
        @WithDefault("${syncular.reactions.webhook.secret:}")
        Optional<String> secret();

        @Override
        @WithDefault("${syncular.reactions.webhook.timeout}")
        Duration timeout();

        @Override
        @WithDefault("${syncular.reactions.webhook.connect-timeout}")
        Duration connectTimeout();

        @Override
        @WithDefault("${syncular.reactions.webhook.read-timeout}")
        Duration readTimeout();

        @Override
        @WithDefault("${syncular.reactions.webhook.pool-size}")
        int poolSize();

        @Override
        @WithDefault("${syncular.reactions.webhook.max-answer-size}")
        MemorySize maxAnswerSize();

        @Override
        @WithDefault("${syncular.reactions.webhook.breaker-failures}")
        int breakerFailures();

        @Override
        @WithDefault("${syncular.reactions.webhook.breaker-open-for}")
        Duration breakerOpenFor();
    }

    /** Time between claim passes of each pod's worker (scheduler {@code every}; {@code off} disables it). */
    @WithDefault("1s")
    @WithConverter(ScheduleInterval.class)
    Duration pollInterval();

    /** How long a claimed reaction stays leased to the worker that claimed it. */
    @WithDefault("30s")
    Duration lease();

    /** Reactions claimed per pass. */
    @WithDefault("20")
    int batchSize();

    /** Retry delay {@code min(max-backoff, initial-backoff × 2^(attempt − 1))}. */
    @WithDefault("1s")
    Duration initialBackoff();

    @WithDefault("5m")
    Duration maxBackoff();

    /** Completed reactions are deleted after this. */
    @WithDefault("30d")
    Duration completedRetention();

    /** Dead-lettered reactions are deleted after this. */
    @WithDefault("90d")
    Duration deadLetterRetention();

    /**
     * The mapping's one cross-field check, run at start-up: the default webhook's and each per-type endpoint's
     * ({@link WebhookEndpoint#problems}); an endpoint is named {@code [a-z0-9]+} (its environment form stays
     * unambiguous), has a url and at least one type, and no type is listed by two endpoints.
     */
    static List<String> problems(ReactionsConfig config) {
        String prefix = "syncular.reactions";
        List<String> out = new ArrayList<>(WebhookEndpoint.problems(prefix + ".webhook", config.webhook()));
        Map<String, String> typeOwner = new HashMap<>();
        config.endpoints().forEach((name, endpoint) -> {
            String p = prefix + ".endpoints." + name;
            if (!name.matches("[a-z0-9]+")) {
                out.add(prefix + ".endpoints: an endpoint name must match [a-z0-9]+ (its environment form"
                        + " stays unambiguous): " + name);
                return;
            }
            if (!endpoint.configured()) {
                out.add(p + ".url is required");
            }
            if (endpoint.types().isEmpty()) {
                out.add(p + ".types lists no reaction type");
            }
            for (String type : endpoint.types()) {
                String other = typeOwner.putIfAbsent(type, name);
                if (other != null) {
                    out.add(prefix + ".endpoints: reaction type " + type + " is listed by two endpoints (" + other
                            + ", " + name + ")");
                }
            }
            out.addAll(WebhookEndpoint.problems(p, endpoint));
        });
        return out;
    }
}
