package dev.syncular.server.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.cli.HttpFailure;
import dev.syncular.server.sync.SyncScenariosContract;
import dev.syncular.server.testsupport.BlobHttp;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestJwks;
import dev.syncular.server.wire.SubscriptionStatus;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.smallrye.jwt.build.Jwt;
import io.smallrye.jwt.build.JwtClaimsBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.PrivateKey;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.UnaryOperator;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * JWT authentication end to end: real HTTP through the running app, tokens signed with an RSA key generated
 * here and verified against a JWKS served by a JDK {@code HttpServer} on a free port. Actor from {@code sub},
 * partition from the {@code tenant} claim, allowed scopes from {@code syncular_scopes}.
 */
@QuarkusTest
@OwnApp
@TestProfile(JwtAuthTest.JwksProfile.class)
class JwtAuthTest {
    static final String ISSUER = "https://idp.test/";
    static final String AUDIENCE = "syncular-test";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final SubscriptionStatus ACTIVE = SubscriptionStatus.ACTIVE;
    private static final HttpClient PARALLEL = HttpClient.newHttpClient();

    /**
     * JWT from configuration alone. The key pair and the JWKS server live in system properties: Quarkus
     * instantiates profiles in more than one class loader, and they must all see one key and one port.
     */
    public static class JwksProfile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            TestJwks.ensureStarted();
            return Map.of(
                    "syncular.schema.path",
                    Path.of("src/test/resources/schema/notes.json")
                            .toAbsolutePath()
                            .toString(),
                    "syncular.storage.pg-schema",
                    "sync_jwt_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10),
                    "syncular.auth.jwt.jwks-url",
                    "http://127.0.0.1:" + System.getProperty(TestJwks.PORT) + "/jwks.json",
                    "syncular.auth.jwt.issuer",
                    ISSUER,
                    "syncular.auth.jwt.audience",
                    AUDIENCE,
                    "syncular.auth.jwt.partition-claim",
                    "tenant",
                    // one refetch for unknown kids per test run: rotationIsPickedUpByOneSharedRefetch makes it
                    "syncular.auth.jwt.jwks-min-refetch-interval",
                    "1h");
        }
    }

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    private String tenant;

    @BeforeEach
    void freshTenant() {
        tenant = "t-" + UUID.randomUUID();
    }

    // ------------------------------------------------------------------------------------------ tokens

    /** A valid token for {@code actor} in this test's tenant; {@code edit} adjusts the claims before signing. */
    private String token(String actor, Map<String, List<String>> scopes, UnaryOperator<JwtClaimsBuilder> edit) {
        JwtClaimsBuilder b = Jwt.issuer(ISSUER)
                .audience(AUDIENCE)
                .subject(actor)
                .claim("tenant", tenant)
                .issuedAt(Instant.now())
                .expiresAt(Instant.now().plusSeconds(300));
        if (scopes != null) {
            b.claim("syncular_scopes", scopes);
        }
        return edit.apply(b).jws().keyId(TestJwks.KID).sign(TestJwks.privateKey());
    }

    private String token(String actor, Map<String, List<String>> scopes) {
        return token(actor, scopes, b -> b);
    }

    private String base() {
        return "http://localhost:" + port;
    }

    /** The SSP2 transport with a bearer token instead of the dev header. */
    private SyncTestClient.Transport bearer(String token) {
        return new SyncTestClient.Transport() {
            @Override
            public byte[] roundTrip(SyncTestClient client, byte[] request) {
                return ok(send(HttpRequest.newBuilder(URI.create(base() + "/sync"))
                        .header("Authorization", "Bearer " + token)
                        .header("Content-Type", "application/vnd.syncular.sync.v2")
                        .POST(HttpRequest.BodyPublishers.ofByteArray(request))
                        .build()));
            }

            @Override
            public byte[] downloadSegment(SyncTestClient client, String segmentId, String scopesHeader) {
                return ok(send(HttpRequest.newBuilder(URI.create(base() + "/segments/" + segmentId))
                        .header("Authorization", "Bearer " + token)
                        .header("X-Syncular-Scopes", scopesHeader)
                        .GET()
                        .build()));
            }
        };
    }

    private static byte[] ok(HttpResponse<byte[]> r) {
        if (r.statusCode() != 200) {
            throw new HttpFailure(r.statusCode(), new String(r.body(), StandardCharsets.UTF_8));
        }
        return r.body();
    }

    private static HttpResponse<byte[]> send(HttpRequest request) {
        return BlobHttp.send(request);
    }

    private static Map<String, Object> note(String id, String project) {
        Map<String, Object> row = new HashMap<>();
        row.put("id", id);
        row.put("project_id", project);
        row.put("title", "note " + id);
        row.put("body", null);
        row.put("priority", null);
        row.put("done", null);
        return row;
    }

    private SyncTestClient client(String token, String actor, String clientId) {
        return new SyncTestClient(SyncScenariosContract.SCHEMA, bearer(token), actor, clientId);
    }

    /** A §10.1 JSON error body with {@code code}, whose text never contains the token. */
    private static void assertError(int status, String code, HttpFailure f, String token) {
        assertEquals(status, f.status, f.body);
        assertJsonError(code, f.body, token);
    }

    /** 401 {@code sync.auth_required} with {@code details.reason} (and {@code details.claim}, or none). */
    static void assertRefused(String reason, String claim, int status, String body, String token) {
        assertEquals(401, status, body);
        assertJsonError("sync.auth_required", body, token);
        try {
            JsonNode details = JSON.readTree(body).path("details");
            assertEquals(reason, details.path("reason").asText(), body);
            assertEquals(claim == null ? 1 : 2, details.size(), body);
            if (claim != null) {
                assertEquals(claim, details.path("claim").asText(), body);
            }
        } catch (IOException e) {
            throw new AssertionError(body, e);
        }
    }

    private static void assertRefused(String reason, String claim, HttpFailure f, String token) {
        assertRefused(reason, claim, f.status, f.body, token);
    }

    static void assertJsonError(String code, String body, String token) {
        try {
            JsonNode n = JSON.readTree(body);
            assertEquals(code, n.path("code").asText(), body);
            assertTrue(n.has("message") && n.has("category") && n.has("retryable"), body);
        } catch (IOException e) {
            throw new AssertionError("not JSON: " + body, e);
        }
        if (token != null) {
            assertFalse(body.contains(token), body);
            assertFalse(body.contains(token.substring(token.lastIndexOf('.') + 1)), body);
        }
        assertFalse(body.contains("Exception"), body);
    }

    private HttpFailure syncFails(String token) {
        SyncTestClient c = client(token, "alice", "c-" + UUID.randomUUID())
                .subscribe("s", "notes", Map.of("project_id", List.of("p1")));
        return assertThrows(HttpFailure.class, c::sync);
    }

    // ------------------------------------------------------------------------------------------ tests

    @Test
    void validTokenPushesAndPulls() {
        String alice = token("alice", Map.of("project_id", List.of("p1")));
        SyncTestClient writer =
                client(alice, "alice", "w-1").subscribe("notes-p1", "notes", Map.of("project_id", List.of("p1")));
        String commit = writer.upsert("notes", note("n1", "p1"), null);
        writer.syncUntilIdle();
        assertTrue(SyncTestClient.applied(writer.result(commit)));

        SyncTestClient reader = client(token("bob", Map.of("project_id", List.of("p1"))), "bob", "r-1")
                .subscribe("notes-p1", "notes", Map.of("project_id", List.of("p1")));
        reader.syncUntilIdle();
        assertEquals(SubscriptionStatus.ACTIVE, reader.subscriptions.get("notes-p1").status);
        assertTrue(reader.table("notes").containsKey("n1"));
    }

    @Test
    void tokenScopesRestrictWhatAPullDelivers() {
        SyncTestClient writer = client(token("alice", Map.of("project_id", List.of("p1", "p2"))), "alice", "w-2")
                .subscribe("all", "notes", Map.of("project_id", List.of("p1", "p2")));
        writer.upsert("notes", note("in", "p1"), null);
        writer.upsert("notes", note("out", "p2"), null);
        writer.syncUntilIdle();
        assertTrue(writer.table("notes").keySet().containsAll(List.of("in", "out")));

        // requested p1+p2, token allows p1: effective = p1 (§3.2 rule 4); the p2 row is never delivered
        SyncTestClient reader = client(token("bob", Map.of("project_id", List.of("p1"))), "bob", "r-2")
                .subscribe("both", "notes", Map.of("project_id", List.of("p1", "p2")))
                .subscribe("p2-only", "notes", Map.of("project_id", List.of("p2")));
        reader.syncUntilIdle();
        assertEquals(SubscriptionStatus.ACTIVE, reader.subscriptions.get("both").status);
        assertTrue(reader.table("notes").containsKey("in"));
        assertFalse(reader.table("notes").containsKey("out"));
        assertEquals(SubscriptionStatus.REVOKED, reader.subscriptions.get("p2-only").status);
        assertEquals("sync.scope_revoked", reader.subscriptions.get("p2-only").reasonCode);
    }

    @Test
    void tokenWithoutScopesClaimRevokesTheSubscription() {
        String seed = token("alice", Map.of("project_id", List.of("p1")));
        SyncTestClient writer =
                client(seed, "alice", "w-3").subscribe("p1", "notes", Map.of("project_id", List.of("p1")));
        writer.upsert("notes", note("secret", "p1"), null);
        writer.syncUntilIdle();

        // authenticated (200), but the actor holds no scopes: §3.2 rule 5 revokes, nothing is delivered
        SyncTestClient reader = client(token("carol", null), "carol", "r-3")
                .subscribe("p1", "notes", Map.of("project_id", List.of("p1")));
        reader.syncUntilIdle();
        assertEquals(SubscriptionStatus.REVOKED, reader.subscriptions.get("p1").status);
        assertEquals("sync.scope_revoked", reader.subscriptions.get("p1").reasonCode);
        assertTrue(reader.table("notes").isEmpty());
    }

    @Test
    void missingOrMalformedAuthorizationIs401() {
        HttpFailure none = assertThrows(
                HttpFailure.class,
                () -> ok(send(HttpRequest.newBuilder(URI.create(base() + "/sync"))
                        .header("Content-Type", "application/vnd.syncular.sync.v2")
                        .POST(HttpRequest.BodyPublishers.ofByteArray(new byte[] {1}))
                        .build())));
        assertRefused("missing_token", null, none, null);
        assertRefused("malformed", null, syncFails("not-a-jwt"), "not-a-jwt");
        assertRefused("malformed", null, syncFails("abc.def.ghi"), "abc.def.ghi");
        // the dev header means nothing once JWT is configured
        HttpResponse<byte[]> dev = send(HttpRequest.newBuilder(URI.create(base() + "/sync"))
                .header("x-actor-id", "alice")
                .header("Content-Type", "application/vnd.syncular.sync.v2")
                .POST(HttpRequest.BodyPublishers.ofByteArray(new byte[] {1}))
                .build());
        assertEquals(401, dev.statusCode());
    }

    /** A token for alice (scopes p1) edited by {@code edit} is refused with a static §10.1 body naming the reason. */
    private void assertRejected(String reason, String claim, UnaryOperator<JwtClaimsBuilder> edit) {
        String t = token("alice", Map.of("project_id", List.of("p1")), edit);
        assertRefused(reason, claim, syncFails(t), t);
    }

    @Test
    void expiredTokenIs401() {
        assertRejected(
                "expired",
                "exp",
                b -> b.issuedAt(Instant.now().minusSeconds(3600))
                        .expiresAt(Instant.now().minusSeconds(600)));
    }

    @Test
    void wrongIssuerIs401() {
        assertRejected("issuer", null, b -> b.issuer("https://evil.test/"));
    }

    @Test
    void wrongAudienceIs401() {
        assertRejected("audience", null, b -> b.audience("someone-else"));
    }

    @Test
    void missingPartitionClaimIs401() {
        assertRejected("missing_claim", "tenant", b -> b.remove("tenant"));
    }

    @Test
    void malformedScopesClaimIs403() {
        String t = token(
                "alice", Map.of("project_id", List.of("p1")), b -> b.claim("syncular_scopes", List.of("project_id")));
        assertError(403, "sync.forbidden", syncFails(t), t);
    }

    @Test
    void foreignSignatureIs401() {
        String forged = Jwt.issuer(ISSUER)
                .audience(AUDIENCE)
                .subject("alice")
                .claim("tenant", tenant)
                .claim("syncular_scopes", Map.of("project_id", List.of("*")))
                .expiresAt(Instant.now().plusSeconds(300))
                .jws()
                .keyId(TestJwks.KID)
                .sign(TestJwks.rsa().getPrivate());
        assertRefused("signature", null, syncFails(forged), forged);
    }

    @Test
    void segmentAndBlobRoutesRequireAToken() {
        String blob = "sha256:" + "0".repeat(64);
        for (HttpRequest r : List.of(
                HttpRequest.newBuilder(URI.create(base() + "/segments/seg-unknown"))
                        .GET()
                        .build(),
                HttpRequest.newBuilder(URI.create(base() + "/blobs/" + blob))
                        .GET()
                        .build(),
                HttpRequest.newBuilder(URI.create(base() + "/blobs/" + blob))
                        .header("Content-Type", "application/octet-stream")
                        .PUT(HttpRequest.BodyPublishers.ofByteArray(new byte[] {1, 2, 3}))
                        .build(),
                HttpRequest.newBuilder(URI.create(base() + "/blobs/" + blob + "/upload-grant"))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString("{\"byteLength\":3}"))
                        .build())) {
            HttpResponse<byte[]> res = send(r);
            assertEquals(401, res.statusCode(), r.method() + " " + r.uri());
            assertTrue(res.headers().firstValue("Content-Type").orElse("").startsWith("application/json"));
            assertRefused(
                    "missing_token", null, res.statusCode(), new String(res.body(), StandardCharsets.UTF_8), null);
        }
        // with a valid token the same routes get past authentication (an unknown segment/blob: 404)
        String t = token("alice", Map.of("project_id", List.of("p1")));
        HttpResponse<byte[]> seg = send(HttpRequest.newBuilder(URI.create(base() + "/segments/seg-unknown"))
                .header("Authorization", "Bearer " + t)
                .header("X-Syncular-Scopes", "{\"project_id\":[\"p1\"]}")
                .GET()
                .build());
        assertEquals(404, seg.statusCode(), new String(seg.body(), StandardCharsets.UTF_8));
        HttpResponse<byte[]> get = send(HttpRequest.newBuilder(URI.create(base() + "/blobs/" + blob))
                .header("Authorization", "Bearer " + t)
                .GET()
                .build());
        assertEquals(404, get.statusCode(), new String(get.body(), StandardCharsets.UTF_8));
        assertNotNull(get.body());
    }

    // ------------------------------------------------------------------------------------------ JWKS cache, claims

    /** A token of exactly these claims, signed with the JWKS's key {@code kid} (no {@code iat} unless given). */
    private static String raw(String kid, PrivateKey key, Map<String, Object> claims) {
        try {
            return TestJwks.rs256(
                    "{\"alg\":\"RS256\",\"typ\":\"JWT\",\"kid\":\"" + kid + "\"}",
                    JSON.writeValueAsString(claims),
                    key);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private Map<String, Object> claims(String actor, long expiresIn) {
        Map<String, Object> c = new HashMap<>();
        c.put("iss", ISSUER);
        c.put("aud", AUDIENCE);
        c.put("sub", actor);
        c.put("tenant", tenant);
        c.put("syncular_scopes", Map.of("project_id", List.of("p1")));
        c.put("exp", Instant.now().getEpochSecond() + expiresIn);
        return c;
    }

    private String raw(Map<String, Object> claims) {
        return raw(TestJwks.KID, TestJwks.privateKey(), claims);
    }

    /** The claims docs/AUTHENTICATION.md shows: {@code exp} and no {@code iat} (RFC 7519 §4.1.6: optional). */
    @Test
    void tokenWithoutIatIsAccepted() {
        Map<String, Object> c = claims("alice", 300);
        assertFalse(c.containsKey("iat"));
        SyncTestClient writer =
                client(raw(c), "alice", "w-iat").subscribe("p1", "notes", Map.of("project_id", List.of("p1")));
        String commit = writer.upsert("notes", note("iat-less", "p1"), null);
        writer.syncUntilIdle();
        assertTrue(SyncTestClient.applied(writer.result(commit)));
    }

    /** The documented 30 s skew: expired 10 s ago passes, 31 s ago does not; the same for {@code nbf}. */
    @Test
    void clockSkewIsTheDocumentedThirtySeconds() {
        assertEquals(ACTIVE, syncs(raw(claims("alice", -10))));
        String late = raw(claims("alice", -31));
        assertRefused("expired", "exp", syncFails(late), late);
        Map<String, Object> soon = claims("alice", 300);
        soon.put("nbf", Instant.now().getEpochSecond() + 10);
        assertEquals(ACTIVE, syncs(raw(soon)));
        // nbf 35 s ahead: refused for 5 s from here (30 s of skew), long enough for a round on a loaded machine; the
        // exp side above holds the 30 s exactly (time only makes an expired token more expired)
        Map<String, Object> later = claims("alice", 300);
        later.put("nbf", Instant.now().getEpochSecond() + 35);
        String early = raw(later);
        assertRefused("not_yet_valid", "nbf", syncFails(early), early);
    }

    private SubscriptionStatus syncs(String token) {
        SyncTestClient c = client(token, "alice", "c-" + UUID.randomUUID())
                .subscribe("s", "notes", Map.of("project_id", List.of("p1")));
        c.syncUntilIdle();
        return c.subscriptions.get("s").status;
    }

    /** Claims are used as sent or refused: never trimmed into another actor or partition. */
    @Test
    void claimsWithControlCharactersOrSurroundingWhitespaceAre401() {
        for (String bad : List.of("alice\u0000", "  alice  ", "alice\n", "\u007falice")) {
            Map<String, Object> c = claims(bad, 300);
            String t = raw(c);
            assertRefused("invalid_claim", "sub", syncFails(t), t);
            Map<String, Object> p = claims("alice", 300);
            p.put("tenant", tenant + bad);
            String tp = raw(p);
            assertRefused("invalid_claim", "tenant", syncFails(tp), tp);
            Map<String, Object> s = claims("alice", 300);
            s.put("syncular_scopes", Map.of("project_id", List.of("p1" + bad)));
            String ts = raw(s);
            assertRefused("invalid_claim", "syncular_scopes", syncFails(ts), ts);
        }
    }

    /** Sends {@code n} {@code POST /sync} with this Authorization header at once; their statuses and bodies. */
    private List<HttpResponse<String>> concurrently(List<String> authorizations) {
        List<CompletableFuture<HttpResponse<String>>> sent = new ArrayList<>();
        for (String a : authorizations) {
            sent.add(PARALLEL.sendAsync(
                    HttpRequest.newBuilder(URI.create(base() + "/sync"))
                            .header("Authorization", a)
                            .header("Content-Type", "application/vnd.syncular.sync.v2")
                            .POST(HttpRequest.BodyPublishers.ofByteArray(new byte[] {1}))
                            .build(),
                    HttpResponse.BodyHandlers.ofString()));
        }
        return sent.stream().map(CompletableFuture::join).toList();
    }

    /** 8,358 garbage tokens once caused 8,415 JWKS fetches (issue 26 item 3): now none. */
    @Test
    void garbageTokensCauseNoJwksFetch() {
        TestJwks.Endpoint jwks = TestJwks.endpoint(TestJwks.DEFAULT);
        // the start-up fetch is over once a known-kid token has passed
        assertEquals(ACTIVE, syncs(raw(claims("alice", 300))));
        int before = jwks.fetches();
        String payload = TestJwks.b64u("{\"sub\":\"x\",\"exp\":9999999999}".getBytes(StandardCharsets.UTF_8));
        List<String> garbage = List.of(
                "Bearer abc.def.ghi",
                "Bearer abc",
                "Bearer %%%.%%%.%%%",
                "Bearer " + TestJwks.b64u("{\"alg\":\"none\",\"kid\":\"zz\"}".getBytes(StandardCharsets.UTF_8)) + "."
                        + payload + ".",
                "Bearer " + TestJwks.b64u("{\"alg\":\"HS256\",\"kid\":\"zz\"}".getBytes(StandardCharsets.UTF_8)) + "."
                        + payload + ".c2ln");
        List<String> headers = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            headers.add(garbage.get(i % garbage.size()));
        }
        for (HttpResponse<String> r : concurrently(headers)) {
            String reason = r.body().contains("\"algorithm\"") ? "algorithm" : "malformed";
            assertRefused(reason, null, r.statusCode(), r.body(), null);
        }
        assertEquals(before, jwks.fetches());
    }

    /** A new kid at the provider: concurrent requests share one refetch; later unknown kids cause none. */
    @Test
    void rotationIsPickedUpByOneSharedRefetch() {
        TestJwks.Endpoint jwks = TestJwks.endpoint(TestJwks.DEFAULT);
        String kid = "rotated-" + UUID.randomUUID();
        jwks.addKey(kid).delay(Duration.ofMillis(300));
        try {
            // whichever test ran first, the start-up fetch is over once a known-kid token has passed
            assertEquals(ACTIVE, syncs(raw(claims("alice", 300))));
            int before = jwks.fetches();
            List<String> rotated = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                rotated.add("Bearer " + raw(kid, jwks.privateKey(kid), claims("alice", 300)));
            }
            for (HttpResponse<String> r : concurrently(rotated)) {
                // past authentication: the body is no SSP2 request (400), never a 401
                assertEquals(400, r.statusCode(), r.body());
            }
            assertEquals(before + 1, jwks.fetches());
            assertEquals(ACTIVE, syncs(raw(kid, jwks.privateKey(kid), claims("alice", 300))));

            PrivateKey stranger = TestJwks.rsa().getPrivate();
            List<String> unknown = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                unknown.add("Bearer " + raw("unknown-" + i, stranger, claims("alice", 300)));
            }
            for (HttpResponse<String> r : concurrently(unknown)) {
                assertRefused("unknown_key", null, r.statusCode(), r.body(), null);
            }
            assertEquals(before + 1, jwks.fetches());
        } finally {
            jwks.delay(Duration.ZERO);
        }
    }
}
