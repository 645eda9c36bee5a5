package dev.syncular.server.boot;

import dev.syncular.server.blobs.BlobsConfig;
import dev.syncular.server.config.MappingConstraints;
import dev.syncular.server.policy.PolicyConfig;
import dev.syncular.server.policy.ReactionsConfig;
import dev.syncular.server.s3.S3Config;
import dev.syncular.server.segments.SegmentsConfig;
import dev.syncular.server.segments.SignedUrlsConfig;
import dev.syncular.server.sync.LeasesConfig;
import io.smallrye.config.ConfigValidationException;
import io.smallrye.config.ConfigValidator;
import io.smallrye.config.SmallRyeConfigBuilder;
import io.smallrye.config.SmallRyeConfigBuilderCustomizer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The checks of the {@code syncular.*} mappings that span more than one value, each the one cross-field check of its
 * mapping ({@code static problems} beside it: {@link PolicyConfig}, {@link ReactionsConfig}, {@link S3Config},
 * {@link SignedUrlsConfig}, {@link LeasesConfig}). Single values are checked by the Jakarta constraints on the
 * mapping methods ({@link MappingConstraints}); a value that does not convert is refused by its converter.
 *
 * <p>Both kinds run while SmallRye Config builds the mappings, before any bean exists: this customizer
 * ({@code META-INF/services}) installs the configuration's validator, which SmallRye calls once per mapping and whose problems it gathers over all mappings; the cross-field checks run when
 * the last mapping they read has been built. A bad configuration thus stops the start with every problem listed,
 * each a sentence naming its property.
 */
public final class ConfigChecks implements SmallRyeConfigBuilderCustomizer {
    /** The mappings the cross-field checks read. */
    private static final Set<Class<?>> READ = Set.of(
            PolicyConfig.class,
            ReactionsConfig.class,
            S3Config.class,
            SegmentsConfig.class,
            BlobsConfig.class,
            SignedUrlsConfig.class,
            LeasesConfig.class);

    @Override
    public void configBuilder(SmallRyeConfigBuilder builder) {
        builder.withValidator(new Validator(new MappingConstraints()));
    }

    /** After every other customizer, so no other validator replaces this one. */
    @Override
    public int priority() {
        return Integer.MAX_VALUE;
    }

    /** Every cross-field problem, each a sentence naming its property; {@code mappings} holds {@link #READ}. */
    static List<String> problems(Map<Class<?>, Object> mappings) {
        SegmentsConfig segments = (SegmentsConfig) mappings.get(SegmentsConfig.class);
        List<String> out = new ArrayList<>();
        out.addAll(PolicyConfig.problems((PolicyConfig) mappings.get(PolicyConfig.class)));
        out.addAll(ReactionsConfig.problems((ReactionsConfig) mappings.get(ReactionsConfig.class)));
        out.addAll(S3Config.problems(
                (S3Config) mappings.get(S3Config.class),
                segments.store(),
                ((BlobsConfig) mappings.get(BlobsConfig.class)).store()));
        out.addAll(SignedUrlsConfig.problems((SignedUrlsConfig) mappings.get(SignedUrlsConfig.class), segments));
        out.addAll(LeasesConfig.problems((LeasesConfig) mappings.get(LeasesConfig.class)));
        return out;
    }

    /** The wrapped validator's problems of each mapping, and the cross-field ones with the last mapping they read. */
    static final class Validator implements ConfigValidator {
        private final ConfigValidator inner;
        private final Map<Class<?>, Object> seen = new ConcurrentHashMap<>();

        Validator(ConfigValidator inner) {
            this.inner = inner;
        }

        @Override
        public void validateMapping(Class<?> mappingClass, String prefix, Object mappingObject) {
            List<ConfigValidationException.Problem> problems = new ArrayList<>();
            try {
                inner.validateMapping(mappingClass, prefix, mappingObject);
            } catch (ConfigValidationException e) {
                for (int i = 0; i < e.getProblemCount(); i++) {
                    problems.add(e.getProblem(i));
                }
            }
            if (READ.contains(mappingClass)
                    && seen.put(mappingClass, mappingObject) == null
                    && seen.size() == READ.size()) {
                problems(seen).stream()
                        .map(ConfigValidationException.Problem::new)
                        .forEach(problems::add);
            }
            if (!problems.isEmpty()) {
                throw new ConfigValidationException(problems.toArray(ConfigValidationException.Problem[]::new));
            }
        }
    }
}
