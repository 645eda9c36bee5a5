package dev.syncular.server.realtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.testsupport.LogCapture;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestJwks;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.smallrye.jwt.build.Jwt;
import jakarta.inject.Inject;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.WebSocketHandshakeException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Browser authentication of the realtime upgrade, with the JDK WebSocket client sending no {@code Authorization}
 * header (as a browser's {@code new WebSocket(url)} cannot): the bearer token from the RFC 6750 §2.3
 * {@code access_token} query parameter or from the configured cookie passes the same JWT checks as the header
 * (§8.1: the same host authentication as {@code POST /sync}), the header wins when both are sent, and neither
 * the access log nor any other log line of the app names the token.
 */
@QuarkusTest
@OwnApp
@TestProfile(SocketCredentialTest.Profile.class)
class BrowserRealtimeAuthTest {
    static final String COOKIE = "syncular_token";

    @TestHTTPResource("/")
    URI base;

    @Inject
    SchemaWindow window;

    @Inject
    RealtimeConfig config;

    String tenant;

    @BeforeEach
    void freshTenant() {
        tenant = "t-" + UUID.randomUUID();
    }

    String token(String actor, Instant expiresAt) {
        return Jwt.issuer(SocketCredentialTest.ISSUER)
                .audience(SocketCredentialTest.AUDIENCE)
                .subject(actor)
                .claim("tenant", tenant)
                .claim("syncular_scopes", Map.of("list_id", List.of("l1")))
                .expiresAt(expiresAt)
                .jws()
                .keyId(TestJwks.KID)
                .sign(TestJwks.privateKey());
    }

    String token(String actor) {
        return token(actor, Instant.now().plusSeconds(300));
    }

    URI url(String clientId, String query) {
        return URI.create(base.toString().replaceFirst("^http", "ws") + "realtime?clientId=" + clientId + query);
    }

    static String q(String token) {
        return "&access_token=" + URLEncoder.encode(token, StandardCharsets.UTF_8);
    }

    static int refusedStatus(URI uri, Map<String, String> headers) {
        CompletionException e = assertThrows(CompletionException.class, () -> RealtimeSocket.connect(uri, headers));
        return assertInstanceOf(WebSocketHandshakeException.class, e.getCause())
                .getResponse()
                .statusCode();
    }

    @Test
    void theQueryParameterAuthenticatesAnUpgradeWithoutHeaderAndIsNeverLogged() throws Exception {
        String bobToken = token("bob");
        String expired = token("bob", Instant.now().minusSeconds(5));
        String clientId = "c-q-" + UUID.randomUUID();
        try (LogCapture access = LogCapture.of("io.quarkus.http.access-log", Level.INFO, "requestId");
                LogCapture all = LogCapture.of("", Level.INFO, "requestId");
                LogCapture ours = LogCapture.of("dev.syncular", Level.FINE, "requestId")) {
            RealtimeSocket s = RealtimeSocket.connect(url(clientId, q(bobToken)), Map.of());
            JsonNode hello = s.nextEvent("hello").get("data");
            assertEquals("bob", hello.get("actorId").asText());
            // the socket is fully served: a sync round over it
            SyncTestClient c =
                    new SyncTestClient(window.current(), new SocketCredentialTest.OverSocket(s), "bob", clientId);
            c.subscribe("s1", "todos", Map.of("list_id", List.of("l1")));
            c.syncUntilIdle();
            s.ws.abort();

            // the same checks as the header: an expired token in the query is refused like one in the header
            assertEquals(401, refusedStatus(url(clientId, q(expired)), Map.of()));
            assertEquals(401, refusedStatus(url(clientId, q("not-a-jwt")), Map.of()));
            // the refusal is an ordinary HTTP answer, so it is in the access log: with its path, not its query
            access.await(l -> l.message().contains("/realtime") && l.message().contains(" 401 "), RealtimeSocket.WAIT);
            for (LogCapture capture : List.of(access, all, ours)) {
                for (LogCapture.Line l : capture.lines) {
                    for (String secret : List.of(bobToken, expired, "not-a-jwt", "access_token")) {
                        assertTrue(!l.message().contains(secret), "a log line names the token: " + l.message());
                    }
                }
            }
        }
    }

    @Test
    void theConfiguredCookieAuthenticatesAndTheQueryParameterComesFirst() throws Exception {
        assertEquals(COOKIE, config.tokenCookie());
        RealtimeSocket s = RealtimeSocket.connect(
                url("c-k-" + UUID.randomUUID(), ""), Map.of("Cookie", "theme=dark; " + COOKIE + "=" + token("carol")));
        assertEquals("carol", s.nextEvent("hello").get("data").get("actorId").asText());
        s.ws.abort();
        RealtimeSocket both = RealtimeSocket.connect(
                url("c-kq-" + UUID.randomUUID(), q(token("dave"))), Map.of("Cookie", COOKIE + "=" + token("carol")));
        assertEquals("dave", both.nextEvent("hello").get("data").get("actorId").asText());
        both.ws.abort();
        // a cookie of another name carries nothing
        assertEquals(
                401, refusedStatus(url("c-k2-" + UUID.randomUUID(), ""), Map.of("Cookie", "other=" + token("carol"))));
    }

    @Test
    void theHeaderWinsOverQueryAndCookie() throws Exception {
        RealtimeSocket s = RealtimeSocket.connect(
                url("c-h-" + UUID.randomUUID(), q(token("dave"))),
                Map.of("Authorization", "Bearer " + token("bob"), "Cookie", COOKIE + "=" + token("carol")));
        assertEquals("bob", s.nextEvent("hello").get("data").get("actorId").asText());
        s.ws.abort();
        // a header that fails is not rescued by a valid query token
        assertEquals(
                401,
                refusedStatus(
                        url("c-h2-" + UUID.randomUUID(), q(token("dave"))),
                        Map.of(
                                "Authorization",
                                "Bearer " + token("bob", Instant.now().minusSeconds(5)))));
    }

    @Test
    void aTokenParameterGivenTwiceIs400() {
        assertEquals(
                400, refusedStatus(url("c-2-" + UUID.randomUUID(), q(token("bob")) + q(token("carol"))), Map.of()));
    }

    @Test
    void aQueryTokenHasTheSameLifetimeAsAHeaderToken() throws Exception {
        RealtimeSocket s = RealtimeSocket.connect(
                url("c-l-" + UUID.randomUUID(), q(token("bob", Instant.now().plusSeconds(2)))), Map.of());
        s.nextEvent("hello");
        assertEquals(CredentialLifetime.EXPIRED_CODE, s.closed.get(RealtimeSocket.WAIT.toSeconds(), TimeUnit.SECONDS));
    }
}
