package dev.syncular.server.config;

import io.smallrye.config.ConfigValidationException;
import io.smallrye.config.ConfigValidator;
import io.smallrye.config.SmallRyeConfigBuilder;
import io.smallrye.config.SmallRyeConfigBuilderCustomizer;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The checks of the {@link SyncularConfig} mapping that span more than one value's type: run by SmallRye Config
 * when the mapping is built, before any bean exists, so a bad configuration stops start-up with every problem
 * listed, each naming its property. (A value that does not convert — a malformed duration, size or interval — is
 * already refused by its converter, also naming the property.)
 *
 * <p>Checked: every signed webhook ({@link SyncularConfig.WebhookEndpoint}) with a url has an absolute http(s) url
 * and a secret, positive timeouts, pool and answer cap, a breaker threshold of 0 or more; a per-type reaction
 * endpoint is named {@code [a-z0-9]+}, has a url and at least one type, and no type is listed twice; a store set to
 * {@code s3} has {@code syncular.s3.bucket}; the §5.4 URL lifetimes ({@code syncular.signed-urls.ttl} while native
 * signed URLs serve the embedded segment store, {@code syncular.s3.presign-ttl} while a store is S3) are within
 * 15 minutes; the §7.3 lease ttl, the pruning and segment-sweep intervals are more than 0s; the inline-segment cap
 * fits an {@code int}; an HMAC key that is set has at least 32 bytes.
 */
public final class SyncularConfigValidator implements ConfigValidator {
    private static final Pattern ENDPOINT_NAME = Pattern.compile("[a-z0-9]+");
    private static final Duration MAX_URL_TTL = Duration.ofMinutes(15);
    /** The shortest key of an HMAC the server signs with (signed URLs, lease records). */
    public static final int MIN_KEY_BYTES = 32;

    /** Installs the validator on every configuration Quarkus builds ({@code META-INF/services}). */
    public static final class Registration implements SmallRyeConfigBuilderCustomizer {
        @Override
        public void configBuilder(SmallRyeConfigBuilder builder) {
            builder.withValidator(new SyncularConfigValidator());
        }
    }

    @Override
    public void validateMapping(Class<?> mappingClass, String prefix, Object mappingObject) {
        if (!(mappingObject instanceof SyncularConfig config)) {
            return;
        }
        List<String> problems = problems(config, prefix);
        if (!problems.isEmpty()) {
            throw new ConfigValidationException(problems.stream()
                    .map(ConfigValidationException.Problem::new)
                    .toArray(ConfigValidationException.Problem[]::new));
        }
    }

    /** Every problem of {@code config} (mapped under {@code prefix}), each a sentence naming its property. */
    static List<String> problems(SyncularConfig config, String prefix) {
        List<String> out = new ArrayList<>();
        webhook(out, prefix + ".policy.validator-webhook", config.policy().validatorWebhook());
        SyncularConfig.Reactions reactions = config.reactions();
        webhook(out, prefix + ".reactions.webhook", reactions.webhook());
        Map<String, String> typeOwner = new HashMap<>();
        reactions.endpoints().forEach((name, endpoint) -> {
            String p = prefix + ".reactions.endpoints." + name;
            if (!ENDPOINT_NAME.matcher(name).matches()) {
                out.add(prefix + ".reactions.endpoints: an endpoint name must match [a-z0-9]+ (its environment form"
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
                    out.add(prefix + ".reactions.endpoints: reaction type " + type + " is listed by two endpoints ("
                            + other + ", " + name + ")");
                }
            }
            webhook(out, p, endpoint);
        });
        SyncularConfig.Storage storage = config.storage();
        positive(out, prefix + ".storage.replica-max-lag", storage.replicaMaxLag());
        positive(out, prefix + ".storage.replica-check-interval", storage.replicaCheckInterval());
        // issue 45: the admin token opens the admin API and the console; a short one is guessable
        key(out, prefix + ".admin.token", config.admin().token());
        if (config.admin().freeAttempts() < 0) {
            out.add(prefix + ".admin.free-attempts must be 0 (off) or more, was "
                    + config.admin().freeAttempts());
        }
        if (config.realtime().presenceRate() < 0 || config.realtime().presenceBurst() < 1) {
            out.add(prefix + ".realtime.presence-rate must be 0 or more and " + prefix
                    + ".realtime.presence-burst at least 1, were "
                    + config.realtime().presenceRate() + " and "
                    + config.realtime().presenceBurst());
        }
        if (config.tenants().topN() < 1 || config.tenants().topN() > 1000) {
            out.add(prefix + ".tenants.top-n must be 1 to 1000, was "
                    + config.tenants().topN());
        }
        if (storage.jobLease().toMillis() < 1000) {
            out.add(prefix + ".storage.job-lease must be at least 1s, was " + storage.jobLease());
        }
        if (storage.replicaPoolMaxSize() < 1) {
            out.add(prefix + ".storage.replica-pool-max-size must be at least 1, was " + storage.replicaPoolMaxSize());
        }
        for (String url : storage.replicas().orElse(List.of())) {
            if (!url.isBlank()
                    && !url.trim().startsWith("postgresql://")
                    && !url.trim().startsWith("postgres://")) {
                // the URL itself may carry a password: never echoed
                out.add(prefix + ".storage.replicas: each is a reactive URL postgresql://host:port/db");
            }
        }
        boolean s3 = config.segments().store() == SyncularConfig.StoreKind.S3
                || config.blobs().store() == SyncularConfig.StoreKind.S3;
        if (config.segments().store() == SyncularConfig.StoreKind.S3
                && blank(config.s3().bucket())) {
            out.add(prefix + ".segments.store=s3 needs " + prefix
                    + ".s3.bucket (and quarkus.s3.* endpoint/credentials)");
        }
        if (config.blobs().store() == SyncularConfig.StoreKind.S3
                && blank(config.s3().bucket())) {
            out.add(prefix + ".blobs.store=s3 needs a bucket: set " + prefix + ".s3.bucket");
        }
        if (s3) {
            within(out, prefix + ".s3.presign-ttl", config.s3().presignTtl(), Duration.ofSeconds(1));
        }
        SyncularConfig.SignedUrls signed = config.signedUrls();
        if (signed.enabled() && config.segments().store() != SyncularConfig.StoreKind.S3) {
            within(out, prefix + ".signed-urls.ttl", signed.ttl(), Duration.ofMillis(1));
            key(out, prefix + ".signed-urls.key", signed.key());
        }
        // the scheduler also reads these as a first delay, which cannot be off
        positive(out, prefix + ".pruning.interval", config.pruning().interval());
        positive(out, prefix + ".segments.sweep-interval", config.segments().sweepInterval());
        if (config.limits().inlineSegmentMaxBytes().asLongValue() > Integer.MAX_VALUE) {
            out.add(prefix + ".limits.inline-segment-max-bytes must be below 2G, was "
                    + config.limits().inlineSegmentMaxBytes().asLongValue());
        }
        SyncularConfig.Leases leases = config.leases();
        if (leases.enabled()) {
            positive(out, prefix + ".leases.ttl", leases.ttl());
            key(out, prefix + ".leases.key", leases.key());
        }
        return out;
    }

    private static void webhook(List<String> out, String p, SyncularConfig.WebhookEndpoint hook) {
        if (!hook.configured()) {
            return;
        }
        String url = hook.url().get().trim();
        try {
            URI uri = new URI(url);
            if (!"http".equalsIgnoreCase(uri.getScheme()) && !"https".equalsIgnoreCase(uri.getScheme())
                    || uri.getHost() == null) {
                out.add(p + ".url must be an absolute http(s) URL, was " + url);
            }
        } catch (URISyntaxException e) {
            out.add(p + ".url must be an absolute http(s) URL, was " + url);
        }
        if (blank(hook.secret())) {
            out.add(p + ".secret is required with " + p + ".url (the HMAC-SHA256 key of Syncular-Signature)");
        }
        positive(out, p + ".timeout", hook.timeout());
        positive(out, p + ".connect-timeout", hook.connectTimeout());
        positive(out, p + ".read-timeout", hook.readTimeout());
        if (hook.poolSize() < 1) {
            out.add(p + ".pool-size must be 1 or more, was " + hook.poolSize());
        }
        if (hook.maxAnswerSize().asLongValue() < 1) {
            out.add(p + ".max-answer-size must be more than 0, was "
                    + hook.maxAnswerSize().asLongValue());
        }
        if (hook.breakerFailures() < 0) {
            out.add(p + ".breaker-failures must be 0 (no breaker) or more, was " + hook.breakerFailures());
        }
        if (hook.breakerFailures() > 0) {
            positive(out, p + ".breaker-open-for", hook.breakerOpenFor());
        }
    }

    private static void positive(List<String> out, String property, Duration d) {
        if (d.isZero() || d.isNegative()) {
            out.add(property + " must be more than 0s, was " + d);
        }
    }

    /** §5.4: a URL lifetime between {@code min} and 15 minutes. */
    private static void within(List<String> out, String property, Duration d, Duration min) {
        if (d.compareTo(min) < 0 || d.compareTo(MAX_URL_TTL) > 0) {
            out.add(property + " must be more than 0s and at most 15m (SSP2 §5.4), was " + d);
        }
    }

    private static void key(List<String> out, String property, Optional<String> key) {
        if (!blank(key) && key.get().getBytes(StandardCharsets.UTF_8).length < MIN_KEY_BYTES) {
            out.add(property + " must have at least " + MIN_KEY_BYTES + " bytes, had "
                    + key.get().getBytes(StandardCharsets.UTF_8).length);
        }
    }

    private static boolean blank(Optional<String> value) {
        return value.filter(v -> !v.isBlank()).isEmpty();
    }
}
