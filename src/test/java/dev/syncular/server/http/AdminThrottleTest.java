package dev.syncular.server.http;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.testsupport.AdminRecoveryProfile;
import dev.syncular.server.testsupport.OwnApp;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * Wrong admin credentials are throttled per source address through the running app (issue 45): a client on
 * 127.0.0.2 presents five wrong bearer tokens (401 each), the sixth attempt is 429 {@code sync.rate_limited} with
 * {@code Retry-After: 1} and reason {@code credential_attempts}, and so are its right token and its console sign-in
 * while it waits; the operator on 127.0.0.1 is served meanwhile.
 */
@QuarkusTest
@OwnApp
@TestProfile(AdminRecoveryProfile.class)
class AdminThrottleTest {
    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    /** One HTTP/1.1 request from local address 127.0.0.2; the status line and headers of the answer. */
    private String from127002(String method, String path, String headers, String body) throws IOException {
        try (Socket s = new Socket()) {
            s.bind(new InetSocketAddress("127.0.0.2", 0));
            s.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
            s.setSoTimeout(30_000);
            byte[] content = body.getBytes(StandardCharsets.UTF_8);
            OutputStream out = s.getOutputStream();
            out.write((method + " " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n" + headers
                            + "Content-Length: " + content.length + "\r\n\r\n")
                    .getBytes(StandardCharsets.UTF_8));
            out.write(content);
            out.flush();
            InputStream in = s.getInputStream();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void aSourcePastFiveWrongTokensWaitsAndOthersAreServed() throws IOException {
        for (int i = 0; i < 5; i++) {
            String answer = from127002("GET", "/admin/partitions", "Authorization: Bearer wrong-" + i + "\r\n", "");
            assertTrue(answer.startsWith("HTTP/1.1 401"), answer);
        }
        String blocked = from127002("GET", "/admin/partitions", "Authorization: Bearer wrong-5\r\n", "");
        assertTrue(blocked.startsWith("HTTP/1.1 401"), "the sixth wrong one is still compared: " + blocked);
        String waiting = from127002(
                "GET", "/admin/partitions", "Authorization: Bearer " + AdminRecoveryProfile.ADMIN_TOKEN + "\r\n", "");
        assertTrue(waiting.startsWith("HTTP/1.1 429"), "the right token waits too: " + waiting);
        assertTrue(waiting.contains("Retry-After: 1") || waiting.contains("retry-after: 1"), waiting);
        assertTrue(waiting.contains("\"code\":\"sync.rate_limited\""), waiting);
        assertTrue(waiting.contains("credential_attempts"), waiting);
        String signIn = from127002(
                "POST",
                "/console/sign-in",
                "Content-Type: application/x-www-form-urlencoded\r\n",
                "token=" + AdminRecoveryProfile.ADMIN_TOKEN);
        assertTrue(signIn.startsWith("HTTP/1.1 429"), "the console's sign-in waits too: " + signIn);
        assertEquals(
                200,
                given().header("Authorization", "Bearer " + AdminRecoveryProfile.ADMIN_TOKEN)
                        .get("/admin/partitions")
                        .statusCode(),
                "another source is served meanwhile");
    }
}
