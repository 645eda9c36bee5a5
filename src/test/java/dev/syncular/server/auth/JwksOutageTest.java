package dev.syncular.server.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.testsupport.BlobHttp;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.Readiness;
import dev.syncular.server.testsupport.TestJwks;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The JWKS cache through the running app while the identity provider misbehaves (issue 26 item 3: a 503 JWKS
 * used to refuse every valid token, a 2 s JWKS to add 2 s to every request). The provider is a real HTTP
 * endpoint ({@link TestJwks}) refreshed every 300 ms, so fetches are under way throughout; the probe is an
 * authenticated {@code GET /segments/<unknown>}: 404 once past authentication, 401 when refused.
 */
@QuarkusTest
@OwnApp
@TestProfile(JwksOutageTest.OutageProfile.class)
class JwksOutageTest {
    static final String ENDPOINT = "jwks-outage";
    static final String KID = "outage-key";
    private static final Duration WAIT = Duration.ofSeconds(30);

    public static class OutageProfile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            TestJwks.Endpoint e = TestJwks.endpoint(ENDPOINT);
            if (!e.hasKey(KID)) {
                e.addKey(KID);
            }
            return Map.of(
                    "syncular.schema.path",
                    Path.of("src/test/resources/schema/notes.json")
                            .toAbsolutePath()
                            .toString(),
                    "syncular.storage.pg-schema",
                    "sync_jwks_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10),
                    "syncular.auth.jwt.jwks-url",
                    e.url(),
                    "syncular.auth.jwt.jwks-refresh-interval",
                    "300ms",
                    "syncular.auth.jwt.jwks-min-refetch-interval",
                    "300ms",
                    "syncular.auth.jwt.jwks-fetch-timeout",
                    "3s");
        }
    }

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    @Inject
    MeterRegistry registry;

    private final TestJwks.Endpoint jwks = TestJwks.endpoint(ENDPOINT);

    @AfterEach
    void healthy() {
        jwks.healthy();
    }

    private String token() {
        return TestJwks.rs256(
                "{\"alg\":\"RS256\",\"kid\":\"" + KID + "\"}",
                "{\"sub\":\"alice\",\"exp\":" + (Instant.now().getEpochSecond() + 300) + "}",
                jwks.privateKey(KID));
    }

    private HttpResponse<byte[]> probe(String token) {
        return BlobHttp.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/segments/seg-unknown"))
                .header("Authorization", "Bearer " + token)
                .header("X-Syncular-Scopes", "{\"project_id\":[\"p1\"]}")
                .GET()
                .build());
    }

    private void assertAccepted(String token) {
        HttpResponse<byte[]> r = probe(token);
        assertEquals(404, r.statusCode(), new String(r.body(), StandardCharsets.UTF_8));
    }

    private double fetches(String outcome) {
        return registry.get("syncular.jwks.fetches")
                .tag("outcome", outcome)
                .counter()
                .count();
    }

    @Test
    void anOutageKeepsValidTokensAccepted() {
        assertAccepted(token());

        jwks.status(503);
        int seen = jwks.fetches();
        jwks.awaitFetches(seen + 3, WAIT); // the third answered request means two 503s were handled
        assertTrue(fetches("http_error") >= 2, String.valueOf(fetches("http_error")));
        for (int i = 0; i < 10; i++) {
            assertAccepted(token());
        }
        Readiness.await(200, Duration.ofSeconds(10)); // readiness stays neutral

        jwks.status(200).delay(Duration.ofSeconds(30)); // hangs: every fetch is abandoned at the 3 s timeout
        seen = jwks.fetches();
        jwks.awaitFetches(seen + 2, WAIT);
        assertTrue(fetches("timeout") >= 1, String.valueOf(fetches("timeout")));
        for (int i = 0; i < 10; i++) {
            assertAccepted(token());
        }
        assertTrue(registry.get("syncular.jwks.key_set_age").gauge().value() > 0);
    }

    /** The provider takes 2 s per answer; requests with a known kid, and garbage ones, never wait for it. */
    @Test
    void aSlowProviderDoesNotSlowRequests() {
        assertAccepted(token());
        jwks.delay(Duration.ofSeconds(2));
        jwks.awaitFetches(jwks.fetches() + 1, WAIT); // a slow fetch is under way from here on
        long worst = 0;
        int pendingSeen = 0;
        for (int i = 0; i < 40; i++) {
            String t = i % 2 == 0 ? token() : "abc.def.ghi";
            long start = System.nanoTime();
            HttpResponse<byte[]> r = probe(t);
            worst = Math.max(worst, System.nanoTime() - start);
            assertEquals(i % 2 == 0 ? 404 : 401, r.statusCode(), new String(r.body(), StandardCharsets.UTF_8));
            pendingSeen = Math.max(pendingSeen, jwks.pending());
        }
        assertTrue(pendingSeen >= 1, "a JWKS fetch was held while the requests ran");
        assertTrue(
                worst < TimeUnit.MILLISECONDS.toNanos(1000),
                "slowest request " + worst / 1_000_000 + " ms, JWKS 2000 ms");
    }
}
