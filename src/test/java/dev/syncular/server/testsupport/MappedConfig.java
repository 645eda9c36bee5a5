package dev.syncular.server.testsupport;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.syncular.server.boot.ConfigChecks;
import io.quarkus.runtime.configuration.DurationConverter;
import io.quarkus.runtime.configuration.MemorySize;
import io.quarkus.runtime.configuration.MemorySizeConverter;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.EnvConfigSource;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The server's {@code syncular.*} mappings built from given properties and environment variables the way Quarkus
 * builds them — Quarkus's duration and size converters, the interceptors the application registers in {@code
 * META-INF/services} (renamed properties, the cross-field checks of {@link ConfigChecks} with the checks of
 * the constraints on the mapping methods) — without booting Quarkus.
 */
public final class MappedConfig {
    private MappedConfig() {}

    /** Every {@code @ConfigMapping} interface of the production code, found in its classes. */
    public static final List<Class<?>> MAPPINGS = mappings();

    private static List<Class<?>> mappings() {
        List<Class<?>> out = new ArrayList<>();
        for (JavaClass c : new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
                .importPackages("dev.syncular.server")) {
            if (c.isAnnotatedWith(ConfigMapping.class)) {
                out.add(c.reflect());
            }
        }
        out.sort(Comparator.comparing(Class::getName));
        return List.copyOf(out);
    }

    /** The configuration itself; building it maps and validates every mapping, then runs the cross-field checks. */
    public static SmallRyeConfig config(Map<String, String> properties, Map<String, String> env) {
        SmallRyeConfigBuilder builder = new SmallRyeConfigBuilder()
                .withSources(new PropertiesConfigSource(new HashMap<>(properties), "test", 300))
                .withSources(new EnvConfigSource(new HashMap<>(env), 400))
                .withConverter(MemorySize.class, 100, new MemorySizeConverter())
                .withConverter(Duration.class, 100, new DurationConverter())
                .addDefaultInterceptors()
                .addDiscoveredInterceptors()
                .addDiscoveredCustomizers();
        for (Class<?> mapping : MAPPINGS) {
            builder.withMapping(mapping);
        }
        return builder.build();
    }

    /** The mapping {@code type} of {@link #config}. */
    public static <T> T mapping(Class<T> type, Map<String, String> properties, Map<String, String> env) {
        return config(properties, env).getConfigMapping(type);
    }

    public static <T> T mapping(Class<T> type, Map<String, String> properties) {
        return mapping(type, properties, Map.of());
    }
}
