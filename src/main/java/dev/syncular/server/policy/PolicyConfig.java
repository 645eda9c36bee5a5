package dev.syncular.server.policy;

import io.quarkus.runtime.configuration.MemorySize;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/** {@code syncular.policy.*}: application policy — validators and reaction rules (§6.7–§6.9, docs/POLICY.md). */
@ConfigMapping(prefix = "syncular.policy")
public interface PolicyConfig {
    /**
     * A JSON policy document ({@code validators}, {@code commitValidators}, {@code reactions}; docs/POLICY.md),
     * compiled against the schema at start-up: an unknown table or column stops the boot. Unset: none.
     */
    Optional<String> file();

    /** A whole-commit validator (§6.8) answered by an HTTPS endpoint; unset url = no webhook validator. */
    ValidatorWebhook validatorWebhook();

    /**
     * The §6.8 validator's endpoint. A call runs while the commit holds its partition lock (§6.8 runs the
     * validator inside the partition transaction): one that times out or fails (connection error, 5xx, an
     * answer above {@code max-answer-size}) answers the round {@code sync.internal_error} (retryable), nothing
     * applies; an open breaker answers the same with {@code details.reason = circuit_open}.
     */
    interface ValidatorWebhook extends WebhookEndpoint {
        /**
         * Registered queries whose rows the webhook receives as evidence (SPEC §6.7 / §6.8
         * {@code queryAuthoritative}, run in the push transaction): a JSON array of
         * {@code {name, query, table?, params}} (docs/POLICY.md). Unset: none.
         */
        Optional<String> evidence();

        @Override
        @WithDefault("2s")
        Duration timeout();

        @Override
        @WithDefault("500ms")
        Duration connectTimeout();

        @Override
        @WithDefault("1s")
        Duration readTimeout();

        @Override
        @WithDefault("32")
        int poolSize();

        @Override
        @WithDefault("64K")
        MemorySize maxAnswerSize();

        @Override
        @WithDefault("5")
        int breakerFailures();

        @Override
        @WithDefault("10s")
        Duration breakerOpenFor();
    }

    /** The mapping's one cross-field check, run at start-up: the validator webhook's ({@link WebhookEndpoint}). */
    static List<String> problems(PolicyConfig config) {
        return WebhookEndpoint.problems("syncular.policy.validator-webhook", config.validatorWebhook());
    }
}
