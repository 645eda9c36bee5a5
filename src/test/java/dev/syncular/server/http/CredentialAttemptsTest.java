package dev.syncular.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.syncular.server.observability.AdminConfig;
import dev.syncular.server.testsupport.MappedConfig;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link CredentialAttempts} on an explicit clock (issue 45): five wrong credentials are free, each further one
 * blocks its source for 1 s doubling to 60 s, other sources are untouched, the right credential clears the source, a
 * quiet source is forgotten after 15 minutes, and {@code free-attempts=0} turns it off.
 */
class CredentialAttemptsTest {
    private static CredentialAttempts attempts(int free) {
        return new CredentialAttempts(MappedConfig.mapping(
                AdminConfig.class, Map.of("syncular.admin.free-attempts", Integer.toString(free))));
    }

    @Test
    void fiveAreFreeThenTheWaitDoublesUpToAMinute() {
        CredentialAttempts a = attempts(5);
        long now = 1_000_000;
        for (int i = 0; i < 5; i++) {
            a.failed("10.0.0.1", now);
            assertEquals(0, a.blockedForMs("10.0.0.1", now), "failure " + (i + 1) + " is free");
        }
        long[] waits = {1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000};
        for (long wait : waits) {
            a.failed("10.0.0.1", now);
            assertEquals(wait, a.blockedForMs("10.0.0.1", now));
            assertEquals(0, a.blockedForMs("10.0.0.2", now), "another source may try");
            now += wait; // the source waited its turn
            assertEquals(0, a.blockedForMs("10.0.0.1", now));
        }
        a.succeeded("10.0.0.1");
        a.failed("10.0.0.1", now);
        assertEquals(0, a.blockedForMs("10.0.0.1", now), "the right credential cleared the source");
    }

    @Test
    void aQuietSourceIsForgotten() {
        CredentialAttempts a = attempts(5);
        long now = 0;
        for (int i = 0; i < 6; i++) {
            a.failed("10.0.0.1", now);
        }
        assertEquals(1000, a.blockedForMs("10.0.0.1", now));
        now += 15 * 60_000 + 1;
        a.failed("10.0.0.1", now);
        assertEquals(0, a.blockedForMs("10.0.0.1", now), "counted from one again");
    }

    @Test
    void zeroTurnsItOff() {
        CredentialAttempts a = attempts(0);
        for (int i = 0; i < 100; i++) {
            a.failed("10.0.0.1", 0);
        }
        assertEquals(0, a.blockedForMs("10.0.0.1", 0));
    }
}
