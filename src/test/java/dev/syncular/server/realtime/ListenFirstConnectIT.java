package dev.syncular.server.realtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.storage.postgres.PostgresSignalListener;
import dev.syncular.server.testsupport.PrometheusScrape;
import dev.syncular.server.testsupport.ServerProcess;
import dev.syncular.server.testsupport.StartsProcesses;
import dev.syncular.server.testsupport.StartupRefusingProxy;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A pod whose first realtime {@code LISTEN} connect fails while the rest of its start-up succeeds (PostgreSQL
 * restarting or failing over at that moment, its connection limit reached) retries it until it listens, with one
 * database host as with several: readiness (which waits for the {@code LISTEN}) comes up on its own instead of staying
 * down while liveness stays up. The packaged server reaches the test database through {@link StartupRefusingProxy},
 * which closes the first three connections named like the realtime hub's ({@code syncular-rt-…}) and passes the pool's.
 */
@StartsProcesses
class ListenFirstConnectIT {
    private static final int REFUSED = 3;

    @Test
    void aRefusedFirstListenConnectIsRetriedUntilThePodIsReady() throws Exception {
        String pgSchema =
                "it_listen_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        try (StartupRefusingProxy proxy = StartupRefusingProxy.refusing("syncular-rt-", REFUSED);
                ServerProcess pod = ServerProcess.builder("listen-first-connect", pgSchema)
                        .env("QUARKUS_DATASOURCE_REACTIVE_URL", proxy.url())
                        .start()) { // start() waits for readiness: it needs the LISTEN
            assertEquals(REFUSED, proxy.refused(), "the hub's first connects were refused");
            assertTrue(proxy.passed() > 0, "the pool's connections passed");
            assertEquals(200, pod.status("/q/health/ready"));
            String metrics = HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(
                                            URI.create("http://127.0.0.1:" + pod.managementPort() + "/q/metrics"))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString())
                    .body();
            assertEquals(
                    (double) REFUSED,
                    PrometheusScrape.parse(metrics).value("syncular_realtime_errors_total", Map.of("kind", "listen")),
                    "each failed connect is counted");
        }
    }

    @Test
    void failedConnectsInARowBackOffFromHalfASecondToTenSeconds() {
        assertEquals(500, PostgresSignalListener.reconnectDelayMs(0), "after a lost connection");
        assertEquals(500, PostgresSignalListener.reconnectDelayMs(1));
        assertEquals(1_000, PostgresSignalListener.reconnectDelayMs(2));
        assertEquals(2_000, PostgresSignalListener.reconnectDelayMs(3));
        assertEquals(8_000, PostgresSignalListener.reconnectDelayMs(5));
        assertEquals(10_000, PostgresSignalListener.reconnectDelayMs(6));
        assertEquals(10_000, PostgresSignalListener.reconnectDelayMs(1_000));
    }
}
