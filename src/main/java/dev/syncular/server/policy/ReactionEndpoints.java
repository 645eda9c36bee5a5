package dev.syncular.server.policy;

import dev.syncular.server.config.SyncularConfig;
import dev.syncular.server.ops.WebhookMetrics;
import io.vertx.mutiny.core.Vertx;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Where each §6.9 reaction is delivered: the endpoint of {@code syncular.reactions.endpoints} that lists its type,
 * else the default {@code syncular.reactions.webhook-url}. Without a default, only the listed types are claimed:
 * the others stay pending, stored and undelivered, as every reaction is when no webhook is configured.
 */
final class ReactionEndpoints {
    private static final Pattern NAME = Pattern.compile("[a-z0-9]+");
    private final Webhook fallback;
    private final Map<String, Webhook> byType;
    private final List<Webhook> all = new ArrayList<>();

    ReactionEndpoints(Vertx vertx, WebhookMetrics metrics, SyncularConfig.Reactions config) {
        String secret = config.webhookSecret().orElse(null);
        fallback = config.webhookUrl().filter(u -> !u.isBlank())
                .map(u -> new Webhook(vertx, "reactions", u, secret, limits(config, config.webhookTimeout()), metrics))
                .orElse(null);
        if (fallback != null) {
            all.add(fallback);
        }
        Map<String, Webhook> routes = new LinkedHashMap<>();
        for (Map.Entry<String, SyncularConfig.Reactions.Endpoint> e : config.endpoints().entrySet()) {
            String name = e.getKey();
            SyncularConfig.Reactions.Endpoint endpoint = e.getValue();
            if (!NAME.matcher(name).matches()) {
                throw new IllegalArgumentException("syncular.reactions.endpoints: an endpoint name must match [a-z0-9]+"
                        + " (its environment form stays unambiguous): " + name);
            }
            if (endpoint.types().isEmpty()) {
                throw new IllegalArgumentException("syncular.reactions.endpoints." + name + ".types lists no reaction type");
            }
            Webhook hook = new Webhook(vertx, name, endpoint.url(), endpoint.secret().orElse(secret),
                    limits(config, endpoint.timeout().orElse(config.webhookTimeout())), metrics);
            all.add(hook);
            for (String type : endpoint.types()) {
                if (routes.put(type, hook) != null) {
                    throw new IllegalArgumentException("syncular.reactions.endpoints: reaction type " + type
                            + " is listed by two endpoints");
                }
            }
        }
        byType = Map.copyOf(routes);
    }

    /**
     * A reaction endpoint's bounds. No circuit breaker: a delivery that fails is rescheduled with backoff and
     * spends one of its attempts (§6.9), which is the breaker; failing calls at once would spend attempts
     * without asking the endpoint.
     */
    static Webhook.Limits limits(SyncularConfig.Reactions config, java.time.Duration timeout) {
        return new Webhook.Limits(timeout, config.webhookConnectTimeout(), config.webhookReadTimeout(),
                config.webhookPoolSize(), config.webhookMaxAnswerSize().asLongValue(), 0, java.time.Duration.ZERO);
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
