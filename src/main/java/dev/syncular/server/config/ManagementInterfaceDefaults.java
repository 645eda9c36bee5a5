package dev.syncular.server.config;

import io.smallrye.config.ConfigSourceContext;
import io.smallrye.config.ConfigSourceFactory;
import io.smallrye.config.ConfigValue;
import io.smallrye.config.PropertiesConfigSource;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import org.eclipse.microprofile.config.spi.ConfigSource;

/**
 * Where the management interface ({@code /q/metrics}, {@code /q/openapi}) listens when nothing says: beside the API,
 * {@value #OFFSET} ports above {@code quarkus.http.port} (8080 → 9080; a random API port, 0, gives a random one too)
 * and on the API's interface ({@code quarkus.http.host}: the dev profile's loopback stays loopback). Quarkus's own
 * default, 0.0.0.0:9000 for every process, made two servers on one host collide (a second instance, a backfill beside
 * a server, a local S3 server on 9000). {@code quarkus.management.port} and {@code quarkus.management.host}, set
 * anywhere (the chart sets the port), win: these values come from a source below every other.
 *
 * <p>Registered in {@code META-INF/services/io.smallrye.config.ConfigSourceFactory}.
 */
public class ManagementInterfaceDefaults implements ConfigSourceFactory {
    static final String HTTP_PORT = "quarkus.http.port";
    static final String HTTP_HOST = "quarkus.http.host";
    static final String MANAGEMENT_PORT = "quarkus.management.port";
    static final String MANAGEMENT_HOST = "quarkus.management.host";
    /** The management port's distance from the API port. */
    static final int OFFSET = 1000;
    /** Below application.properties (250), the environment, system properties and the embedded database's (50). */
    static final int ORDINAL = 40;

    @Override
    public Iterable<ConfigSource> getConfigSources(ConfigSourceContext context) {
        Map<String, String> props = new HashMap<>();
        String port = value(context, HTTP_PORT);
        if (port.matches("\\d{1,5}")) {
            props.put(MANAGEMENT_PORT, Integer.toString(managementPort(Integer.parseInt(port))));
        }
        String host = value(context, HTTP_HOST);
        if (!host.isEmpty()) {
            props.put(MANAGEMENT_HOST, host);
        }
        return List.of(new PropertiesConfigSource(props, "ManagementInterfaceDefaults", ORDINAL));
    }

    @Override
    public OptionalInt getPriority() {
        return OptionalInt.of(ORDINAL);
    }

    /** The default management port for an API port: {@value #OFFSET} above it; random (0) for a random one. */
    static int managementPort(int httpPort) {
        int port = httpPort + OFFSET;
        return httpPort == 0 || port > 65_535 ? 0 : port;
    }

    private static String value(ConfigSourceContext context, String name) {
        ConfigValue v = context.getValue(name);
        String s = v == null ? null : v.getValue();
        return s == null ? "" : s.trim();
    }
}
