package dev.syncular.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.runtime.configuration.ConfigurationException;
import java.time.Duration;
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
}
