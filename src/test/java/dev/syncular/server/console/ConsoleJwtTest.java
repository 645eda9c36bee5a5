package dev.syncular.server.console;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.http.AdminAccess;
import dev.syncular.server.realtime.SocketCredentialTest;
import dev.syncular.server.testsupport.LogCapture;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.TestJwks;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import io.smallrye.jwt.build.Jwt;
import io.smallrye.jwt.build.JwtClaimsBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;

/**
 * Console sign-in with a JWT where JWT authentication is configured ({@code syncular.admin.console.role} and
 * {@code .role-claim}): a token the server's JWT checks accept and whose nested role claim holds the admin role
 * signs in as {@code jwt:<sub>} (the audit says so), for no longer than the token lives; a token without the
 * role, an expired one or one signed by an unknown key does not. The JWKS is served by {@link TestJwks}; the app is
 * the socket-credential one ({@link SocketCredentialTest.Profile}), whose JWT settings it shares.
 */
@QuarkusTest
@OwnApp
@TestProfile(SocketCredentialTest.Profile.class)
class ConsoleJwtTest {
    static final String ISSUER = SocketCredentialTest.ISSUER;
    static final String AUDIENCE = SocketCredentialTest.AUDIENCE;

    private static String token(UnaryOperator<JwtClaimsBuilder> edit) {
        JwtClaimsBuilder b = Jwt.issuer(ISSUER)
                .audience(AUDIENCE)
                .subject("ops-alice")
                .issuedAt(Instant.now())
                .expiresAt(Instant.now().plusSeconds(120))
                .claim("realm_access", Map.of("roles", List.of("viewer", "syncular-admin")));
        return edit.apply(b).jws().keyId(TestJwks.KID).sign(TestJwks.privateKey());
    }

    private static Response signIn(String token) {
        return given().redirects()
                .follow(false)
                .contentType("application/x-www-form-urlencoded")
                .formParam("token", token)
                .post("/console/sign-in");
    }

    @Test
    void aJwtWithTheAdminRoleSignsInForNoLongerThanItLives() throws Exception {
        try (LogCapture audit = LogCapture.of(AdminAccess.AUDIT_CATEGORY, Level.INFO, "requestId")) {
            String jwt = token(b -> b);
            Response ok = signIn(jwt);
            assertEquals(303, ok.statusCode(), ok.asString());
            String cookie = ok.header("Set-Cookie");
            int maxAge = Integer.parseInt(cookie.replaceAll(".*Max-Age=(\\d+).*", "$1"));
            assertTrue(maxAge <= 120 && maxAge > 60, "the session ends with the token: " + cookie);
            String session = ok.getCookie(ConsoleAccess.COOKIE);
            given().cookie(ConsoleAccess.COOKIE, session)
                    .get("/console/overview")
                    .then()
                    .statusCode(200)
                    .body(org.hamcrest.Matchers.containsString("jwt:ops-alice"));
            assertNotNull(audit.await(
                    l -> l.message().equals("console POST /console/sign-in by=jwt:ops-alice status=303 code=-"),
                    Duration.ofSeconds(10)));
            assertTrue(audit.lines.stream().noneMatch(l -> l.message().contains(jwt)), "no token in the audit");
        }
    }

    @Test
    void aJwtWithoutTheRoleExpiredOrSignedByAnotherKeyDoesNot() {
        assertEquals(
                401,
                signIn(token(b -> b.claim("realm_access", Map.of("roles", List.of("viewer")))))
                        .statusCode());
        assertEquals(
                401,
                signIn(token(b -> b.claim("realm_access", Map.of("roles", "syncular-admins"))))
                        .statusCode());
        assertEquals(
                401,
                signIn(token(b -> b.issuedAt(Instant.now().minusSeconds(600))
                                .expiresAt(Instant.now().minusSeconds(300))))
                        .statusCode());
        // a right token clears the source's wrong ones (http.CredentialAttempts): six refusals in a row would pass the
        // default five free attempts and block this source for a second, and the next sign-in (the other test, in
        // whatever order the methods run) would be answered 429
        assertEquals(303, signIn(token(b -> b)).statusCode());
        assertEquals(
                401, signIn(token(b -> b.issuer("https://elsewhere.test/"))).statusCode());
        String foreign = Jwt.issuer(ISSUER)
                .audience(AUDIENCE)
                .subject("ops-mallory")
                .expiresAt(Instant.now().plusSeconds(120))
                .claim("realm_access", Map.of("roles", List.of("syncular-admin")))
                .jws()
                .keyId(TestJwks.KID)
                .sign(TestJwks.rsa().getPrivate());
        assertEquals(401, signIn(foreign).statusCode());
        assertEquals(401, signIn("not.a.jwt").statusCode());
    }
}
