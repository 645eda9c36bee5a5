package dev.syncular.server.policy;

import dev.syncular.server.observability.WebhookMetrics;
import dev.syncular.server.sync.Tracing;
import io.vertx.mutiny.core.Vertx;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Where each §6.9 reaction is delivered: the endpoint of {@code syncular.reactions.endpoints} that lists its type,
 * else the default {@code syncular.reactions.webhook.url}. Without a default, only the listed types are claimed:
 * the others stay pending, stored and undelivered, as every reaction is when no webhook is configured. Names,
 * urls, secrets, bounds and the one-endpoint-per-type rule are checked with the mapping
 * (at start-up, {@link ReactionsConfig#problems}); each endpoint's bounds are its {@link WebhookEndpoint}
 * group (a per-type endpoint inherits the default webhook's unless it sets its own).
 */
final class ReactionEndpoints {
    private final Webhook fallback;
    private final Map<String, Webhook> byType;
    private final List<Webhook> all = new ArrayList<>();

    ReactionEndpoints(Vertx vertx, WebhookMetrics metrics, ReactionsConfig config, Tracing tracing) {
        ReactionsConfig.ReactionWebhook hook = config.webhook();
        fallback = hook.configured()
                ? new Webhook(
                        vertx,
                        "reactions",
                        hook.url().get(),
                        hook.secret().orElse(null),
                        Webhook.Limits.of(hook),
                        metrics,
                        tracing)
                : null;
        if (fallback != null) {
            all.add(fallback);
        }
        Map<String, Webhook> routes = new LinkedHashMap<>();
        for (Map.Entry<String, ReactionsConfig.Endpoint> e : config.endpoints().entrySet()) {
            ReactionsConfig.Endpoint endpoint = e.getValue();
            Webhook endpointHook = new Webhook(
                    vertx,
                    e.getKey(),
                    endpoint.url().orElseThrow(),
                    endpoint.secret().orElse(null),
                    Webhook.Limits.of(endpoint),
                    metrics,
                    tracing);
            all.add(endpointHook);
            for (String type : endpoint.types()) {
                routes.putIfAbsent(type, endpointHook);
            }
        }
        byType = Map.copyOf(routes);
    }

    /** Whether any reaction can be delivered. */
    boolean any() {
        return !all.isEmpty();
    }

    /** The types a worker may claim, or {@code null} for every type (a default webhook is configured). */
    List<String> claimable() {
        return fallback != null ? null : List.copyOf(byType.keySet());
    }

    /** The endpoint of {@code type}; never null for a claimable type. */
    Webhook forType(String type) {
        return byType.getOrDefault(type, fallback);
    }

    void close() {
        all.forEach(Webhook::close);
    }
}
