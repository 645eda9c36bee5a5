package dev.syncular.server.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.syncular.server.testsupport.RawHttp;
import io.quarkus.test.junit.QuarkusTest;
import java.util.LinkedHashMap;
import java.util.Map;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * The development header authenticator applies the claim rule ({@link ClaimText}): an {@code x-actor-id} or
 * {@code x-syncular-partition} holding a control character is refused with 401 {@code details.reason}
 * {@code invalid_claim}, never trimmed or folded into another actor. Sent over a raw socket: HTTP client
 * libraries refuse to send such values. (Whitespace around a header value is optional whitespace in HTTP,
 * RFC 9110 §5.5, which the HTTP layer strips before any authenticator sees the value.)
 */
@QuarkusTest
class DevHeaderAuthTest {
    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    private RawHttp.Answer post(String actor, String partition) throws Exception {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Content-Type", "application/vnd.syncular.sync.v2");
        headers.put("Content-Length", "1");
        headers.put("Connection", "close");
        headers.put("x-actor-id", actor);
        if (partition != null) {
            headers.put("x-syncular-partition", partition);
        }
        try (RawHttp http = RawHttp.open("127.0.0.1", port)) {
            return http.head("POST", "/sync", headers).write(new byte[] {1}).read();
        }
    }

    @Test
    void controlCharactersInTheHeadersAre401() throws Exception {
        // a well-formed actor gets past authentication: the one-byte body is no SSP2 request
        assertEquals(400, post("alice", "dev-p").status());
        for (String bad : new String[] {"al\tice", "alice\tx"}) {
            RawHttp.Answer actor = post(bad, null);
            JwtAuthTest.assertRefused("invalid_claim", "x-actor-id", actor.status(), actor.body(), null);
            RawHttp.Answer partition = post("alice", "p\t1");
            JwtAuthTest.assertRefused(
                    "invalid_claim", "x-syncular-partition", partition.status(), partition.body(), null);
        }
    }
}
