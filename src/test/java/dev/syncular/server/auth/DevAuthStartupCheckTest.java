package dev.syncular.server.auth;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.runtime.configuration.ConfigurationException;
import io.quarkus.runtime.configuration.DurationConverter;
import io.quarkus.runtime.configuration.MemorySize;
import io.quarkus.runtime.configuration.MemorySizeConverter;
import io.smallrye.config.EnvConfigSource;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.io.IOException;
import java.net.URL;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DevAuthStartupCheckTest {

    @Test
    void devBeansWithoutTheFlagRefuseToStart() {
        ConfigurationException e =
                assertThrows(ConfigurationException.class, () -> DevAuthStartupCheck.verify(true, true, false, true));
        assertTrue(e.getMessage().contains("syncular.dev-auth.enabled=true"), e.getMessage());
        assertTrue(e.getMessage().contains("syncular.auth.jwt.jwks-url"), e.getMessage());
        assertTrue(e.getMessage().contains("syncular.auth.jwt.public-key"), e.getMessage());
        assertThrows(ConfigurationException.class, () -> DevAuthStartupCheck.verify(false, true, false, true));
        assertThrows(ConfigurationException.class, () -> DevAuthStartupCheck.verify(true, false, false, true));
    }

    @Test
    void explicitFlagOrHostBeansStart() {
        assertDoesNotThrow(() -> DevAuthStartupCheck.verify(true, true, true, true));
        assertDoesNotThrow(() -> DevAuthStartupCheck.verify(false, false, false, true));
        assertDoesNotThrow(() -> DevAuthStartupCheck.verify(true, true, true, false));
    }

    /** application.properties: prod defaults the flag to false, the env var SYNCULAR_DEV_AUTH_ENABLED overrides it. */
    @Test
    void prodProfileDisablesDevAuthUnlessSetExplicitly() throws IOException {
        assertEquals(false, config("prod", Map.of()).enabled());
        assertEquals(
                true,
                config("prod", Map.of("SYNCULAR_DEV_AUTH_ENABLED", "true")).enabled());
        assertEquals(true, config("dev", Map.of()).enabled());
        assertEquals(true, config("test", Map.of()).enabled());
    }

    private static DevAuthConfig config(String profile, Map<String, String> env) throws IOException {
        URL props = DevAuthStartupCheckTest.class.getClassLoader().getResource("application.properties");
        SmallRyeConfig config = new SmallRyeConfigBuilder()
                .withProfile(profile)
                .withSources(new PropertiesConfigSource(props, 250))
                .withSources(new EnvConfigSource(env, 300))
                .withConverter(MemorySize.class, 100, new MemorySizeConverter())
                .withConverter(Duration.class, 100, new DurationConverter())
                .withMapping(DevAuthConfig.class)
                .build();
        return config.getConfigMapping(DevAuthConfig.class);
    }
}
