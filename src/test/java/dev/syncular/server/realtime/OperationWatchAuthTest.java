package dev.syncular.server.realtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.TestJwks;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.smallrye.jwt.build.Jwt;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.WebSocketHandshakeException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The REMOTE.md §6 watch socket is authenticated exactly as the §8.1 sync socket, with JWTs (the profile of
 * {@link SocketCredentialTest}): the {@code Authorization} header, the {@code access_token} query parameter and
 * the token cookie all open it; no token, or an expired one, is refused 401 before the upgrade; an open socket
 * closes with 4401 when its token expires. This app registers no queries, so a {@code watch} is answered
 * {@code operation.unknown} — enough to show the socket is served.
 */
@QuarkusTest
@OwnApp
@TestProfile(SocketCredentialTest.Profile.class)
class OperationWatchAuthTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String WATCH = "{\"t\":\"object\",\"v\":[[\"revision\",{\"t\":\"number\",\"v\":1}],"
            + "[\"kind\",{\"t\":\"string\",\"v\":\"watch\"}],[\"watchId\",{\"t\":\"string\",\"v\":\"w\"}],"
            + "[\"clientId\",{\"t\":\"string\",\"v\":\"c\"}],[\"operationId\",{\"t\":\"string\",\"v\":\"sha256:00/q\"}],"
            + "[\"params\",{\"t\":\"object\",\"v\":[]}]]}";

    @TestHTTPResource("/")
    URI base;

    String token(Instant expiresAt) {
        return Jwt.issuer(SocketCredentialTest.ISSUER)
                .audience(SocketCredentialTest.AUDIENCE)
                .subject("bob")
                .claim("tenant", "t-" + UUID.randomUUID())
                .expiresAt(expiresAt)
                .jws()
                .keyId(TestJwks.KID)
                .sign(TestJwks.privateKey());
    }

    URI uri(String query) {
        return URI.create(base.toString().replaceFirst("^http", "ws") + "operations/realtime" + query);
    }

    /** A watch on the socket is answered (operation.unknown: nothing is registered here). */
    static void served(RealtimeSocket s) throws Exception {
        s.ws.sendBinary(ByteBuffer.wrap(WATCH.getBytes(StandardCharsets.UTF_8)), true)
                .join();
        byte[] b = s.binaries.poll(RealtimeSocket.WAIT.toSeconds(), TimeUnit.SECONDS);
        assertNotNull(b);
        JsonNode m = JSON.readTree(b);
        assertTrue(
                m.toString().contains("\"watch_error\"") && m.toString().contains("\"operation.unknown\""),
                m.toString());
    }

    @Test
    void everyTokenFormOfTheSyncSocketOpensIt() throws Exception {
        String t = token(Instant.now().plusSeconds(300));
        RealtimeSocket header = RealtimeSocket.connect(uri(""), Map.of("Authorization", "Bearer " + t));
        RealtimeSocket query =
                RealtimeSocket.connect(uri("?access_token=" + URLEncoder.encode(t, StandardCharsets.UTF_8)), Map.of());
        RealtimeSocket cookie =
                RealtimeSocket.connect(uri(""), Map.of("Cookie", BrowserRealtimeAuthTest.COOKIE + "=" + t));
        try {
            served(header);
            served(query);
            served(cookie);
        } finally {
            header.ws.abort();
            query.ws.abort();
            cookie.ws.abort();
        }
        for (Map<String, String> refused : List.of(
                Map.<String, String>of(),
                Map.of("Authorization", "Bearer " + token(Instant.now().minusSeconds(60))))) {
            CompletionException e =
                    assertThrows(CompletionException.class, () -> RealtimeSocket.connect(uri(""), refused));
            assertInstanceOf(WebSocketHandshakeException.class, e.getCause());
            assertEquals(
                    401,
                    ((WebSocketHandshakeException) e.getCause()).getResponse().statusCode());
        }
    }

    @Test
    void aSocketClosesWith4401WhenItsTokenExpires() throws Exception {
        Instant exp = Instant.now().plusSeconds(2);
        RealtimeSocket s = RealtimeSocket.connect(uri(""), Map.of("Authorization", "Bearer " + token(exp)));
        served(s);
        int code = s.closed.get(RealtimeSocket.WAIT.toSeconds(), TimeUnit.SECONDS);
        assertEquals(CredentialLifetime.EXPIRED_CODE, code, s.closeReason());
        assertEquals("sync.auth_required: credential expired", s.closeReason());
        assertTrue(System.currentTimeMillis() >= exp.getEpochSecond() * 1000, "never before exp");
    }
}
