package dev.syncular.server.boot;

import dev.syncular.server.observability.WebhookMetrics;
import dev.syncular.server.operations.QueryRegistry;
import dev.syncular.server.policy.PolicyConfig;
import dev.syncular.server.policy.WritePolicies;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.sync.CommitValidator;
import dev.syncular.server.sync.ReactionPlanner;
import dev.syncular.server.sync.RowValidator;
import dev.syncular.server.sync.Tracing;
import dev.syncular.server.sync.WritePolicy;
import io.vertx.mutiny.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/** The server's {@link WritePolicy} (§6.7–§6.9), built by {@link WritePolicies#of}. */
@ApplicationScoped
public class PolicyProducer {

    @Produces
    @Singleton
    WritePolicy writePolicy(
            PolicyConfig config,
            SchemaWindow window,
            Instance<RowValidator> rowBeans,
            Instance<CommitValidator> commitBeans,
            Instance<ReactionPlanner> plannerBeans,
            Vertx vertx,
            WebhookMetrics webhooks,
            Tracing tracing,
            QueryRegistry queries) {
        return WritePolicies.of(config, window, rowBeans, commitBeans, plannerBeans, vertx, webhooks, tracing, queries);
    }
}
