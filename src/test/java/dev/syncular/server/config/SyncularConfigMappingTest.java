package dev.syncular.server.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.blobs.BlobsConfig;
import dev.syncular.server.jobs.PruningConfig;
import dev.syncular.server.policy.PolicyConfig;
import dev.syncular.server.policy.ReactionsConfig;
import dev.syncular.server.policy.WebhookEndpoint;
import dev.syncular.server.s3.S3Config;
import dev.syncular.server.segments.SegmentsConfig;
import dev.syncular.server.testsupport.LogCapture;
import dev.syncular.server.testsupport.MappedConfig;
import io.smallrye.config.ConfigValidationException;
import io.smallrye.config.SmallRyeConfig;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.logging.Level;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.Test;

/**
 * The {@code syncular.*} mappings as Quarkus builds them ({@link MappedConfig}: the application's interceptors and
 * validator from {@code META-INF/services}): renamed properties still read under their old names with a warning
 * naming the new one, durations and sizes as types (schedule intervals with their explicit {@code off}), one
 * webhook group whose per-type endpoints inherit the default webhook's bounds, and a bad value stopping the build
 * of the configuration with the property's name. No Quarkus boot.
 */
class SyncularConfigMappingTest {
    private static final String SECRET = "webhook-secret-0123456789abcdef";

    /**
     * {@code syncular.s3.threads} (the synchronous S3 client's pool, issue 44 hole 5) bounded the S3 calls in flight
     * per pod; the asynchronous client's bound is {@code quarkus.s3.async-client.max-concurrency}, which the old
     * name still sets (with a warning), and the {@code syncular} mapping no longer has it.
     */
    @Test
    void theOldS3ThreadsSettingSetsTheAsyncClientsMaxConcurrency() throws Exception {
        try (LogCapture log = LogCapture.of(RenamedProperties.class.getName(), Level.WARNING, "none")) {
            io.smallrye.config.SmallRyeConfig c = MappedConfig.config(Map.of("syncular.s3.threads", "7"), Map.of());
            assertEquals(7, c.getValue("quarkus.s3.async-client.max-concurrency", Integer.class));
            log.await(
                    l -> l.message().contains("syncular.s3.threads is deprecated")
                            && l.message().contains("quarkus.s3.async-client.max-concurrency"),
                    Duration.ofSeconds(5));
            Mapped mapped = mapped(Map.of("syncular.s3.threads", "7"));
            assertEquals(Duration.ofMinutes(10), mapped.s3().presignTtl());
        }
    }

    @Test
    void theOldReactionWebhookNamesAreStillReadWithAWarningNamingTheNewOnes() throws Exception {
        try (LogCapture log = LogCapture.of(RenamedProperties.class.getName(), Level.WARNING, "none")) {
            Mapped c = mapped(Map.of(
                    "syncular.reactions.webhook-url", "https://hooks.example.com/reactions",
                    "syncular.reactions.webhook-secret", SECRET,
                    "syncular.reactions.webhook-timeout", "7s",
                    "syncular.reactions.webhook-pool-size", "3",
                    "syncular.reactions.endpoints.billing.types", "invoice.paid",
                    "syncular.reactions.endpoints.billing.url", "https://hooks.example.com/billing"));
            ReactionsConfig.ReactionWebhook hook = c.reactions().webhook();
            assertEquals("https://hooks.example.com/reactions", hook.url().orElseThrow());
            assertEquals(SECRET, hook.secret().orElseThrow());
            assertEquals(Duration.ofSeconds(7), hook.timeout());
            assertEquals(3, hook.poolSize());
            // a per-type endpoint inherits the default webhook's bounds and secret, old names included
            ReactionsConfig.Endpoint billing = c.reactions().endpoints().get("billing");
            assertEquals(Duration.ofSeconds(7), billing.timeout());
            assertEquals(3, billing.poolSize());
            assertEquals(SECRET, billing.secret().orElseThrow());
            log.await(
                    l -> l.message().contains("syncular.reactions.webhook-url is deprecated")
                            && l.message().contains("syncular.reactions.webhook.url"),
                    Duration.ofSeconds(5));
            log.await(
                    l -> l.message().contains("syncular.reactions.webhook-timeout is deprecated")
                            && l.message().contains("syncular.reactions.webhook.timeout"),
                    Duration.ofSeconds(5));
        }
    }

    @Test
    void theNewNameWinsAndOldNamesAreNotReportedAsUnknown() {
        var config = MappedConfig.config(
                Map.of(
                        "syncular.reactions.webhook-timeout", "7s",
                        "syncular.reactions.webhook.timeout", "9s"),
                Map.of());
        assertEquals(
                Duration.ofSeconds(9),
                config.getConfigMapping(ReactionsConfig.class).webhook().timeout());
        var names = StreamSupport.stream(config.getPropertyNames().spliterator(), false)
                .toList();
        assertTrue(names.contains("syncular.reactions.webhook.timeout"), names.toString());
        assertFalse(names.contains("syncular.reactions.webhook-timeout"), "iterated under its new name: " + names);
    }

    @Test
    void anOldNameInAProfileIsRead() {
        Mapped c = mapped(
                Map.of("%prod.syncular.reactions.webhook-read-timeout", "6s", "smallrye.config.profile", "prod"));
        assertEquals(Duration.ofSeconds(6), c.reactions().webhook().readTimeout());
    }

    @Test
    void theEnvironmentFormOfARenamedPropertyIsUnchanged() {
        Mapped c = mapped(
                Map.of(),
                Map.of(
                        "SYNCULAR_REACTIONS_WEBHOOK_URL", "https://hooks.example.com/r",
                        "SYNCULAR_REACTIONS_WEBHOOK_SECRET", SECRET,
                        "SYNCULAR_REACTIONS_WEBHOOK_READ_TIMEOUT", "4s"));
        assertEquals(
                "https://hooks.example.com/r", c.reactions().webhook().url().orElseThrow());
        assertEquals(Duration.ofSeconds(4), c.reactions().webhook().readTimeout());
    }

    @Test
    void eachWebhookKeepsItsOwnDefaults() {
        Mapped c = mapped(Map.of());
        WebhookEndpoint validator = c.policy().validatorWebhook();
        WebhookEndpoint reactions = c.reactions().webhook();
        assertFalse(validator.configured());
        assertEquals(Duration.ofSeconds(2), validator.timeout());
        assertEquals(Duration.ofMillis(500), validator.connectTimeout());
        assertEquals(32, validator.poolSize());
        assertEquals(5, validator.breakerFailures());
        assertEquals(Duration.ofSeconds(10), reactions.timeout());
        assertEquals(Duration.ofSeconds(2), reactions.connectTimeout());
        assertEquals(8, reactions.poolSize());
        assertEquals(0, reactions.breakerFailures(), "reactions: the retry schedule is the breaker (§6.9)");
        assertEquals(64 * 1024, reactions.maxAnswerSize().asLongValue());
    }

    @Test
    void intervalsAreDurationsWithAnExplicitOff() {
        Mapped c = mapped(Map.of(
                "syncular.blobs.sweep-interval",
                "off",
                "syncular.pruning.interval",
                "2d",
                "syncular.segments.sweep-interval",
                "PT30M",
                "syncular.reactions.poll-interval",
                "500ms",
                "syncular.limits.inline-segment-max-bytes",
                "131072"));
        assertTrue(ScheduleInterval.off(c.blobs().sweepInterval()));
        assertEquals(Duration.ofDays(2), c.pruning().interval());
        assertEquals(Duration.ofMinutes(30), c.segments().sweepInterval());
        assertEquals(Duration.ofMillis(500), c.reactions().pollInterval());
        assertEquals(131072, c.limits().inlineSegmentMaxBytes().asLongValue());
        Mapped defaults = mapped(Map.of());
        assertEquals(Duration.ofHours(1), defaults.pruning().interval());
        assertEquals(Duration.ofSeconds(1), defaults.reactions().pollInterval());
        assertEquals(256 * 1024, defaults.limits().inlineSegmentMaxBytes().asLongValue());
    }

    @Test
    void aValueThatDoesNotConvertStopsTheBuildNamingTheProperty() {
        refused(Map.of("syncular.pruning.interval", "0s"), "syncular.pruning.interval must be more than 0s");
        refused(Map.of("syncular.pruning.interval", "off"), "syncular.pruning.interval");
        refused(Map.of("syncular.blobs.sweep-interval", "0s"), "syncular.blobs.sweep-interval");
        refused(Map.of("syncular.reactions.poll-interval", "sometimes"), "syncular.reactions.poll-interval");
        refused(Map.of("syncular.limits.inline-segment-max-bytes", "lots"), "syncular.limits.inline-segment-max-bytes");
        refused(Map.of("syncular.reactions.webhook-timeout", "soon"), "syncular.reactions.webhook.timeout");
    }

    @Test
    void aBadWebhookStopsTheBuildNamingTheProperty() {
        refused(
                Map.of("syncular.policy.validator-webhook.url", "https://v.example.com/validate"),
                "syncular.policy.validator-webhook.secret is required");
        refused(
                Map.of(
                        "syncular.policy.validator-webhook.url",
                        "v.example.com/validate",
                        "syncular.policy.validator-webhook.secret",
                        SECRET),
                "syncular.policy.validator-webhook.url must be");
        refused(
                Map.of(
                        "syncular.reactions.webhook.url",
                        "https://hooks.example.com/r",
                        "syncular.reactions.webhook.secret",
                        SECRET,
                        "syncular.reactions.webhook.pool-size",
                        "0"),
                "syncular.reactions.webhook.pool-size must be 1 or more");
        refused(
                Map.of(
                        "syncular.reactions.webhook.secret",
                        SECRET,
                        "syncular.reactions.endpoints.billing.url",
                        "https://hooks.example.com/b"),
                "syncular.reactions.endpoints.billing.types is required");
        refused(
                Map.of(
                        "syncular.reactions.webhook.secret",
                        SECRET,
                        "syncular.reactions.endpoints.billing.types",
                        "invoice.paid"),
                "syncular.reactions.endpoints.billing.url is required");
    }

    @Test
    void otherCrossPropertyChecksStopTheBuildNamingTheProperty() {
        refused(
                Map.of("syncular.signed-urls.ttl", "20m"),
                "syncular.signed-urls.ttl must be more than 0s and at most 15m");
        refused(Map.of("syncular.signed-urls.key", "short"), "syncular.signed-urls.key must have at least 32 bytes");
        // issue 45: the admin token opens the admin API and the console
        refused(
                Map.of("syncular.admin.token", "admin-31-bytes-0123456789abcdef"),
                "syncular.admin.token must have at least 32 bytes");
        refused(Map.of("syncular.admin.free-attempts", "-1"), "syncular.admin.free-attempts must be 0 (off) or more");
        refused(Map.of("syncular.realtime.presence-burst", "0"), "syncular.realtime.presence-burst must be at least 1");
        refused(Map.of("syncular.storage.job-lease", "500ms"), "syncular.storage.job-lease must be at least 1s");
        refused(Map.of("syncular.leases.enabled", "true", "syncular.leases.ttl", "0s"), "syncular.leases.ttl");
        refused(Map.of("syncular.blobs.store", "s3"), "syncular.blobs.store=s3 needs a bucket");
        refused(Map.of("syncular.blobs.store", "s3", "syncular.s3.bucket", " "), "syncular.s3.bucket");
        refused(
                Map.of("syncular.blobs.store", "S3", "syncular.s3.bucket", "b", "syncular.s3.presign-ttl", "20m"),
                "syncular.s3.presign-ttl");
        refused(
                Map.of("syncular.segments.store", "s3", "syncular.s3.bucket", "b", "syncular.s3.presign-ttl", "1h"),
                "syncular.s3.presign-ttl");
        // checked only where they apply, as before: signed URLs off, leases off
        mapped(Map.of(
                "syncular.signed-urls.enabled",
                "false",
                "syncular.signed-urls.ttl",
                "20m",
                "syncular.leases.ttl",
                "0s"));
    }

    /**
     * The features' mappings share the {@code syncular} namespace with {@code SyncularConfig} (prefix {@code
     * syncular}): a property under it that no mapping declares, such as a misspelt one, is refused as before the split.
     */
    @Test
    void aMisspeltPropertyIsRefusedNamingIt() {
        refused(Map.of("syncular.realtime.max-conections", "5"), "syncular.realtime.max-conections");
        refused(Map.of("syncular.fairnes.max-rounds", "5"), "syncular.fairnes.max-rounds");
    }

    @Test
    void everyProblemIsListedAtOnce() {
        Map<String, String> props = new HashMap<>();
        props.put("syncular.policy.validator-webhook.url", "https://v.example.com/validate");
        props.put("syncular.blobs.store", "s3");
        props.put("syncular.tenants.top-n", "0");
        ConfigValidationException e = assertThrows(ConfigValidationException.class, () -> mapped(props));
        // two cross-field problems (PolicyConfig, S3Config) and one constraint (TenantsConfig), in one refusal
        assertEquals(3, e.getProblemCount(), e.getMessage());
        assertTrue(e.getMessage().contains("syncular.tenants.top-n must be 1 to 1000"), e.getMessage());
    }

    /** Every mapping of one configuration built by {@link MappedConfig}, by feature. */
    private record Mapped(SmallRyeConfig config) {
        ReactionsConfig reactions() {
            return config.getConfigMapping(ReactionsConfig.class);
        }

        PolicyConfig policy() {
            return config.getConfigMapping(PolicyConfig.class);
        }

        S3Config s3() {
            return config.getConfigMapping(S3Config.class);
        }

        BlobsConfig blobs() {
            return config.getConfigMapping(BlobsConfig.class);
        }

        PruningConfig pruning() {
            return config.getConfigMapping(PruningConfig.class);
        }

        SegmentsConfig segments() {
            return config.getConfigMapping(SegmentsConfig.class);
        }

        LimitsConfig limits() {
            return config.getConfigMapping(LimitsConfig.class);
        }
    }

    private static Mapped mapped(Map<String, String> props) {
        return new Mapped(MappedConfig.config(props, Map.of()));
    }

    private static Mapped mapped(Map<String, String> props, Map<String, String> env) {
        return new Mapped(MappedConfig.config(props, env));
    }

    private static void refused(Map<String, String> props, String message) {
        ConfigValidationException e =
                assertThrows(ConfigValidationException.class, () -> mapped(props), props::toString);
        assertTrue(e.getMessage().contains(message), e.getMessage());
    }
}
