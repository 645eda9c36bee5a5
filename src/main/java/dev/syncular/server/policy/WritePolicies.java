package dev.syncular.server.policy;

import dev.syncular.server.observability.WebhookMetrics;
import dev.syncular.server.operations.QueryRegistry;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.sync.CommitValidator;
import dev.syncular.server.sync.ReactionPlanner;
import dev.syncular.server.sync.RowValidator;
import dev.syncular.server.sync.Tracing;
import dev.syncular.server.sync.WritePolicy;
import io.quarkus.runtime.configuration.ConfigurationException;
import io.vertx.mutiny.core.Vertx;
import jakarta.enterprise.inject.Instance;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jboss.logging.Logger;

/**
 * The server's {@link WritePolicy} (§6.7–§6.9), from three ways in, in this order:
 * <ol>
 *   <li>the declarative document {@code syncular.policy.file} ({@link PolicyDocument});</li>
 *   <li>CDI beans implementing {@link RowValidator} (its {@code table()}, or every table),
 *       {@link CommitValidator} and {@link ReactionPlanner}, for teams that build their own image;</li>
 *   <li>the validator webhook {@code syncular.policy.validator-webhook.*} ({@link WebhookValidator}, with the
 *       evidence queries of {@code .evidence}, {@link WebhookEvidence}), last.</li>
 * </ol>
 * With none of them the policy is {@link WritePolicy#NONE} and the push path runs no policy code. The bean is
 * produced by the composition root ({@code boot.PolicyProducer}).
 */
public final class WritePolicies {
    private WritePolicies() {}

    /** The policy of {@code config}, the host's validator and planner beans and the validator webhook. */
    public static WritePolicy of(
            PolicyConfig config,
            SchemaWindow window,
            Instance<RowValidator> rowBeans,
            Instance<CommitValidator> commitBeans,
            Instance<ReactionPlanner> plannerBeans,
            Vertx vertx,
            WebhookMetrics webhooks,
            Tracing tracing,
            QueryRegistry queries) {
        var schema = window.current();
        WritePolicy declared = WritePolicy.NONE;
        if (config.file().filter(f -> !f.isBlank()).isPresent()) {
            Path file = Path.of(config.file().get().trim());
            try {
                declared = PolicyDocument.parse(Files.readString(file, StandardCharsets.UTF_8), schema);
            } catch (IOException e) {
                throw new ConfigurationException("syncular.policy.file cannot be read: " + file.toAbsolutePath());
            } catch (IllegalArgumentException e) {
                throw new ConfigurationException(
                        "syncular.policy.file " + file.toAbsolutePath() + ": " + e.getMessage());
            }
        }
        Map<String, List<RowValidator>> rows = new HashMap<>();
        declared.rowValidators()
                .forEach((t, v) ->
                        rows.computeIfAbsent(t, k -> new ArrayList<>()).addAll(v));
        for (RowValidator v : rowBeans) {
            if (v.table() != null && schema.table(v.table()) == null) {
                throw new ConfigurationException("RowValidator bean "
                        + v.getClass().getName() + " names a table the schema does not have: " + v.table());
            }
            for (var t : schema.tables()) {
                if (v.table() == null || v.table().equals(t.name())) {
                    rows.computeIfAbsent(t.name(), k -> new ArrayList<>()).add(v);
                }
            }
        }
        List<CommitValidator> commits = new ArrayList<>(declared.commitValidators());
        commitBeans.forEach(commits::add);
        PolicyConfig.ValidatorWebhook hook = config.validatorWebhook();
        if (hook.configured()) { // bounds by their constraints, url and secret at start-up (PolicyConfig.problems)
            commits.add(new WebhookValidator(
                    new Webhook(
                            vertx,
                            "validator",
                            hook.url().get(),
                            hook.secret().get(),
                            Webhook.Limits.of(hook),
                            webhooks,
                            tracing),
                    schema,
                    System::currentTimeMillis,
                    evidence(hook, schema, queries)));
        }
        List<ReactionPlanner> planners = new ArrayList<>(declared.planners());
        plannerBeans.forEach(planners::add);
        WritePolicy policy = new WritePolicy(rows, commits, planners);
        if (!rows.isEmpty() || !commits.isEmpty() || !planners.isEmpty()) {
            Logger.getLogger(WritePolicies.class)
                    .infof(
                            "Application policy: %d row validators on %d tables, %d whole-commit validators, %d reaction planners",
                            rows.values().stream().mapToInt(List::size).sum(),
                            rows.size(),
                            commits.size(),
                            planners.size());
        }
        return policy;
    }

    private static WebhookEvidence evidence(
            PolicyConfig.ValidatorWebhook hook, CompiledSchema schema, QueryRegistry queries) {
        String declared = hook.evidence().orElse("");
        if (declared.isBlank()) {
            return WebhookEvidence.NONE;
        }
        try {
            return WebhookEvidence.parse(declared, schema, queries);
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException("syncular.policy.validator-webhook.evidence: " + e.getMessage());
        }
    }
}
