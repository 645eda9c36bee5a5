package dev.syncular.server.http;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.runtime.configuration.ConfigurationException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Start-up checks of the production wiring. */
class EngineProducerTest {
    /** §5.4: the production signed-URL TTL is more than zero and at most 15 minutes; the refusal names the property. */
    @Test
    void signedUrlTtlOutsideTheSpecRangeStopsTheBoot() {
        for (Duration bad : new Duration[] {Duration.ZERO, Duration.ofSeconds(-5), Duration.ofMinutes(16)}) {
            ConfigurationException e = assertThrows(ConfigurationException.class, () -> EngineProducer.signedUrlTtl(bad));
            assertTrue(e.getMessage().contains("syncular.signed-urls.ttl"), e.getMessage());
        }
        assertEquals(Duration.ofMinutes(15), EngineProducer.signedUrlTtl(Duration.ofMinutes(15)));
        assertEquals(Duration.ofSeconds(1), EngineProducer.signedUrlTtl(Duration.ofSeconds(1)));
    }

    /**
     * Signed URLs (§5.4) are verified by whichever pod a client reaches: the key is configured and shared. Without
     * one, prod refuses to start naming {@code syncular.signed-urls.key}; dev and test derive one key per storage
     * schema, the same in every process (pods of a dev deployment verify each other's URLs).
     */
    @Test
    void theSigningKeyIsConfiguredInProdAndSharedOutsideIt() {
        ConfigurationException missing = assertThrows(ConfigurationException.class,
                () -> EngineProducer.signingKey(Optional.empty(), "public", true));
        assertTrue(missing.getMessage().contains("syncular.signed-urls.key")
                && missing.getMessage().contains("syncular.signed-urls.enabled=false"), missing.getMessage());
        assertThrows(ConfigurationException.class, () -> EngineProducer.signingKey(Optional.of(" "), "public", true));
        ConfigurationException shortKey = assertThrows(ConfigurationException.class,
                () -> EngineProducer.signingKey(Optional.of("too short"), "public", true));
        assertTrue(shortKey.getMessage().contains("at least 32 bytes"), shortKey.getMessage());
        String configured = "0123456789abcdef0123456789abcdef-prod";
        assertArrayEquals(configured.getBytes(StandardCharsets.UTF_8), EngineProducer.signingKey(Optional.of(configured), "public", true));
        byte[] dev = EngineProducer.signingKey(Optional.empty(), "public", false);
        assertEquals(32, dev.length);
        assertArrayEquals(dev, EngineProducer.signingKey(Optional.empty(), "public", false), "stable across processes");
        assertFalse(Arrays.equals(dev, EngineProducer.signingKey(Optional.empty(), "other", false)), "per storage schema");
    }
}
