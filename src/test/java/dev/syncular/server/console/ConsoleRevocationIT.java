package dev.syncular.server.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.testsupport.ServerProcess;
import dev.syncular.server.testsupport.StartsProcesses;
import dev.syncular.server.testsupport.TestJwks;
import io.smallrye.jwt.build.Jwt;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Revocation that takes effect on every pod (issue 45), with three server processes on one PostgreSQL storage: a
 * console session is the deployment's (opened on one pod, it works on another running the same credentials), and a
 * pod configured with a new admin token knows no session opened under the old one, and a pod whose console role is
 * another one knows no session a JWT opened under the role taken away — while the admin token's sessions, which that
 * role never granted, keep working there.
 */
@StartsProcesses
class ConsoleRevocationIT {
    private static final String ISSUER = "https://idp.revocation.test/";
    private static final String AUDIENCE = "syncular-revocation-test";
    private static final String TOKEN = "revocation-admin-token-" + UUID.randomUUID();
    private static final String NEW_TOKEN = "revocation-rotated-token-" + UUID.randomUUID();
    private final HttpClient http = HttpClient.newHttpClient();

    private static ServerProcess.Builder pod(String name, String schema, String token, String role) {
        TestJwks.ensureStarted();
        return ServerProcess.builder(name, schema)
                .config(Map.of(
                        "syncular.admin.token", token,
                        "syncular.auth.jwt.jwks-url", TestJwks.jwksUrl(),
                        "syncular.auth.jwt.issuer", ISSUER,
                        "syncular.auth.jwt.audience", AUDIENCE,
                        "syncular.admin.console.role", role,
                        "syncular.admin.console.role-claim", "roles"));
    }

    private static String jwt() {
        return Jwt.issuer(ISSUER)
                .audience(AUDIENCE)
                .subject("ops-bob")
                .issuedAt(Instant.now())
                .expiresAt(Instant.now().plusSeconds(300))
                .claim("roles", List.of("syncular-admin"))
                .jws()
                .keyId(TestJwks.KID)
                .sign(TestJwks.privateKey());
    }

    /** Signs in on {@code pod} with {@code credential}: the session cookie ({@code name=value}). */
    private String signIn(ServerProcess pod, String credential) throws Exception {
        HttpResponse<String> r = http.send(
                HttpRequest.newBuilder(URI.create(pod.baseUrl() + "/console/sign-in"))
                        .header("Content-Type", "application/x-www-form-urlencoded")
                        .POST(HttpRequest.BodyPublishers.ofString(
                                "token=" + URLEncoder.encode(credential, StandardCharsets.UTF_8)))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(303, r.statusCode(), r.body());
        String cookie = r.headers().firstValue("set-cookie").orElseThrow().split(";", 2)[0];
        assertTrue(cookie.startsWith(ConsoleAccess.COOKIE + "=") && cookie.length() > 20, cookie);
        return cookie;
    }

    /** Whether {@code pod} serves the overview to {@code cookie}'s session (200), not the sign-in redirect (303). */
    private boolean served(ServerProcess pod, String cookie) throws Exception {
        HttpResponse<String> r = http.send(
                HttpRequest.newBuilder(URI.create(pod.baseUrl() + "/console/overview"))
                        .header("Cookie", cookie)
                        .GET()
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertTrue(r.statusCode() == 200 || r.statusCode() == 303, r.statusCode() + " " + r.body());
        return r.statusCode() == 200;
    }

    @Test
    void aNewAdminTokenOrAnotherConsoleRoleEndsTheSessionsItNoLongerGrants() throws Exception {
        String schema =
                "it_revoke_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
        try (ServerProcess first =
                        pod("revoke-first", schema, TOKEN, "syncular-admin").start();
                ServerProcess roleless = pod("revoke-roleless", schema, TOKEN, "syncular-auditor")
                        .start();
                ServerProcess rotated = pod("revoke-rotated", schema, NEW_TOKEN, "syncular-admin")
                        .start()) {
            String admin = signIn(first, TOKEN);
            String byJwt = signIn(first, jwt());

            assertTrue(served(first, admin) && served(first, byJwt), "both sessions on the pod that opened them");
            // the same admin token on another pod: the admin token's session is the deployment's
            assertTrue(served(roleless, admin), "the admin token's session on another pod of the same token");
            // that pod's console role is another one: the JWT's session, granted by the role taken away, is over
            assertTrue(!served(roleless, byJwt), "a session granted by a role the pod no longer configures");
            // a pod with a new admin token knows neither session
            assertTrue(!served(rotated, admin), "an admin-token session on a pod with a new token");
            assertTrue(!served(rotated, byJwt), "a JWT session on a pod with a new token");
            // the pod still configured as before keeps both (a rollout ends them as each pod takes the new settings)
            assertTrue(served(first, admin) && served(first, byJwt));
            // and the new credentials open sessions of their own there
            assertTrue(served(rotated, signIn(rotated, NEW_TOKEN)));
        }
    }
}
