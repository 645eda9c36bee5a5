package dev.syncular.server.testsupport;

import dev.syncular.server.config.SyncularConfig;
import io.quarkus.runtime.configuration.DurationConverter;
import io.quarkus.runtime.configuration.MemorySize;
import io.quarkus.runtime.configuration.MemorySizeConverter;
import io.smallrye.config.EnvConfigSource;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * The {@link SyncularConfig} mapping built from given properties and environment variables the way Quarkus builds
 * it — Quarkus's duration and size converters, and the interceptors and builder customizers the application
 * registers in {@code META-INF/services} (renamed properties, the mapping's validator) — without booting Quarkus.
 */
public final class MappedConfig {
    private MappedConfig() {}

    /** The configuration itself; building it maps and validates {@link SyncularConfig}. */
    public static SmallRyeConfig config(Map<String, String> properties, Map<String, String> env) {
        return new SmallRyeConfigBuilder()
                .withSources(new PropertiesConfigSource(new HashMap<>(properties), "test", 300))
                .withSources(new EnvConfigSource(new HashMap<>(env), 400))
                .withConverter(MemorySize.class, 100, new MemorySizeConverter())
                .withConverter(Duration.class, 100, new DurationConverter())
                .addDefaultInterceptors()
                .addDiscoveredInterceptors()
                .addDiscoveredCustomizers()
                .withMapping(SyncularConfig.class)
                .build();
    }

    public static SyncularConfig mapping(Map<String, String> properties, Map<String, String> env) {
        return config(properties, env).getConfigMapping(SyncularConfig.class);
    }

    public static SyncularConfig mapping(Map<String, String> properties) {
        return mapping(properties, Map.of());
    }
}
