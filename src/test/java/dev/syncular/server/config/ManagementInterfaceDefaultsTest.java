package dev.syncular.server.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The management interface's defaults follow the API ({@link ManagementInterfaceDefaults}): two server processes on
 * one host, each given only its API port, get two management ports; explicit settings win.
 */
class ManagementInterfaceDefaultsTest {

    private static SmallRyeConfig config(Map<String, String> properties) {
        return new SmallRyeConfigBuilder()
                .withSources(new PropertiesConfigSource(properties, "test", 250))
                .withSources(new ManagementInterfaceDefaults())
                .build();
    }

    @Test
    void theManagementPortIsTheApiPortPlusAThousandOnTheApisInterface() {
        SmallRyeConfig first = config(Map.of("quarkus.http.port", "8080", "quarkus.http.host", "127.0.0.1"));
        assertEquals(9080, first.getValue("quarkus.management.port", Integer.class));
        assertEquals("127.0.0.1", first.getValue("quarkus.management.host", String.class));
        SmallRyeConfig second = config(Map.of("quarkus.http.port", "8081"));
        assertEquals(9081, second.getValue("quarkus.management.port", Integer.class));
        assertTrue(
                second.getOptionalValue("quarkus.management.host", String.class).isEmpty());
    }

    @Test
    void explicitSettingsWin() {
        SmallRyeConfig c = config(Map.of(
                "quarkus.http.port", "8080",
                "quarkus.http.host", "127.0.0.1",
                "quarkus.management.port", "9000",
                "quarkus.management.host", "0.0.0.0"));
        assertEquals(9000, c.getValue("quarkus.management.port", Integer.class));
        assertEquals("0.0.0.0", c.getValue("quarkus.management.host", String.class));
    }

    @Test
    void aRandomApiPortGivesARandomManagementPort() {
        assertEquals(0, config(Map.of("quarkus.http.port", "0")).getValue("quarkus.management.port", Integer.class));
        assertEquals(0, ManagementInterfaceDefaults.managementPort(65_000));
    }
}
