package dev.syncular.server.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.sync.SyncRequestContext;
import dev.syncular.server.testsupport.TestJwks;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quarkus.runtime.configuration.ConfigurationException;
import io.quarkus.runtime.configuration.MemorySize;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.security.spec.ECGenParameterSpec;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/**
 * {@link JwtAuthenticator} with static keys (no HTTP) and a fixed clock: claims → actor, partition, scopes; the
 * optional {@code iat}; the clock skew's boundaries; every {@code details.reason} of a refusal (docs/AUTHENTICATION.md)
 * and the syntactic refusals that happen before any key lookup.
 */
class JwtAuthenticatorTest {
    private static final KeyPair KEYS = TestJwks.rsa();
    private static final String PEM = "-----BEGIN PUBLIC KEY-----\n"
            + Base64.getMimeEncoder(64, "\n".getBytes())
                    .encodeToString(KEYS.getPublic().getEncoded())
            + "\n-----END PUBLIC KEY-----";
    private static final Instant NOW = Instant.parse("2026-12-01T12:00:00Z");
    private static final long T = NOW.getEpochSecond();
    private static final String HEADER = "{\"alg\":\"RS256\",\"typ\":\"JWT\"}";
    private static final ObjectMapper JSON = new ObjectMapper();

    /** {@code syncular.auth.jwt.*} with defaults, a PEM key and {@code iss}/{@code aud} checks. */
    static class Settings implements JwtConfig {
        Optional<String> jwksUrl = Optional.empty();
        Optional<String> publicKey = Optional.of(PEM);
        Optional<String> issuer = Optional.of("iss-1");
        Optional<List<String>> audience = Optional.of(List.of("aud-1", "aud-2"));
        Duration clockSkew = Duration.ofSeconds(30);
        String actorClaim = "sub";
        Optional<String> partitionClaim = Optional.empty();
        Map<String, String> scopeClaims = Map.of();
        List<String> algorithms = List.of("RS256");
        Duration refresh = Duration.ofMinutes(60);
        Duration minRefetch = Duration.ofSeconds(30);
        Duration fetchTimeout = Duration.ofSeconds(5);
        MemorySize maxBytes = new MemorySize(BigInteger.valueOf(256 * 1024));

        public Optional<String> jwksUrl() {
            return jwksUrl;
        }

        public Optional<String> publicKey() {
            return publicKey;
        }

        public Optional<String> publicKeyLocation() {
            return Optional.empty();
        }

        public Optional<String> issuer() {
            return issuer;
        }

        public Optional<List<String>> audience() {
            return audience;
        }

        public Duration clockSkew() {
            return clockSkew;
        }

        public List<String> signatureAlgorithms() {
            return algorithms;
        }

        public Duration jwksRefreshInterval() {
            return refresh;
        }

        public Duration jwksMinRefetchInterval() {
            return minRefetch;
        }

        public Duration jwksFetchTimeout() {
            return fetchTimeout;
        }

        public MemorySize jwksMaxBytes() {
            return maxBytes;
        }

        public String actorClaim() {
            return actorClaim;
        }

        public Optional<String> partitionClaim() {
            return partitionClaim;
        }

        public String partition() {
            return "fixed";
        }

        public String scopesClaim() {
            return "syncular_scopes";
        }

        public Map<String, String> scopeClaims() {
            return scopeClaims;
        }
    }

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    private JwtAuthenticator auth(Settings s) {
        Clock clock = Clock.fixed(NOW, ZoneOffset.UTC);
        return new JwtAuthenticator(s, JwtKeySource.of(s, clock, registry), clock, registry);
    }

    private JwtAuthenticator auth() {
        return auth(new Settings());
    }

    /** Valid claims for alice, expiring in a minute, without {@code iat}. */
    private static Map<String, Object> claims() {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("iss", "iss-1");
        c.put("aud", "aud-2");
        c.put("sub", "alice");
        c.put("exp", T + 60);
        return c;
    }

    private static Map<String, Object> claims(Consumer<Map<String, Object>> edit) {
        Map<String, Object> c = claims();
        edit.accept(c);
        return c;
    }

    private static String json(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String token(Map<String, Object> claims) {
        return TestJwks.rs256(HEADER, json(claims), KEYS.getPrivate());
    }

    private static String b64(String text) {
        return TestJwks.b64u(text.getBytes(StandardCharsets.UTF_8));
    }

    /** {@code token} is refused with 401, {@code details.reason} and (or not) {@code details.claim}, nothing else. */
    private static SyncError refused(JwtAuthenticator auth, String token, TokenRejection reason, String claim) {
        SyncError e = assertThrows(SyncError.class, () -> auth.verify(token), reason.code);
        assertEquals(ErrorCode.AUTH_REQUIRED, e.code());
        assertEquals(reason.message, e.getMessage());
        assertEquals(reason.code, e.details().get("reason"), String.valueOf(e.details()));
        assertEquals(claim, e.details().get("claim"), String.valueOf(e.details()));
        assertTrue(Set.of("reason", "claim").containsAll(e.details().keySet()), String.valueOf(e.details()));
        return e;
    }

    // ------------------------------------------------------------------------------------------ claims

    @Test
    void pemKeyFixedPartitionAndScopesClaim() {
        SyncRequestContext ctx = auth().verify(token(claims(
                c -> c.put("syncular_scopes", Map.of("list_id", List.of("l1", "l2"), "team_id", List.of("*"))))));
        assertEquals("alice", ctx.actorId());
        assertEquals("fixed", ctx.partition());
        assertEquals(Map.of("list_id", List.of("l1", "l2"), "team_id", List.of("*")), ctx.grantedScopes());
        assertEquals(
                (T + 60) * 1000 + 30_000,
                ctx.credentialExpiresAtMs(),
                "exp + the 30 s skew: when HTTP starts refusing it");
    }

    @Test
    void claimMappingAndConfiguredActorAndPartitionClaims() {
        Settings s = new Settings();
        s.actorClaim = "email";
        s.partitionClaim = Optional.of("org");
        s.scopeClaims = Map.of("list_id", "lists", "team_id", "team");
        SyncRequestContext ctx = auth(s).verify(token(claims(c -> {
            c.put("email", "a@example.com");
            c.put("org", "acme");
            c.put("lists", List.of("l1", "l2"));
            c.put("team", "t1");
            c.put("syncular_scopes", Map.of("list_id", List.of("l3")));
        })));
        assertEquals("a@example.com", ctx.actorId());
        assertEquals("acme", ctx.partition());
        assertEquals(List.of("l3", "l1", "l2"), ctx.grantedScopes().get("list_id"));
        assertEquals(List.of("t1"), ctx.grantedScopes().get("team_id"));
    }

    @Test
    void noScopeClaimsGrantNothing() {
        SyncRequestContext ctx = auth().verify(token(claims()));
        assertEquals(Map.of(), ctx.grantedScopes());
        assertEquals(Map.of(), new JwtScopeResolver().resolveScopes(ctx).await().indefinitely());
        // without the request context there is no token: fail (revokes), never grant
        assertThrows(
                IllegalStateException.class,
                () -> new JwtScopeResolver()
                        .resolveScopes("alice", "fixed")
                        .await()
                        .indefinitely());
        // a context from another authenticator (no granted scopes) grants nothing either
        assertEquals(
                Map.of(),
                new JwtScopeResolver()
                        .resolveScopes(new SyncRequestContext("a", "p"))
                        .await()
                        .indefinitely());
        assertNull(new SyncRequestContext("a", "p").grantedScopes());
    }

    /** RFC 7519 §4.1.6: {@code iat} is optional; {@code exp} is what this server requires. */
    @Test
    void iatIsOptionalExpIsRequired() {
        JwtAuthenticator auth = auth();
        assertFalse(claims().containsKey("iat"));
        assertEquals("alice", auth.verify(token(claims())).actorId());
        assertEquals(
                "alice", auth.verify(token(claims(c -> c.put("iat", T - 5)))).actorId());
        assertEquals(
                "alice", auth.verify(token(claims(c -> c.put("exp", T + 0.5)))).actorId()); // a fractional NumericDate
        refused(auth, token(claims(c -> c.remove("exp"))), TokenRejection.MISSING_CLAIM, "exp");
        refused(auth, token(claims(c -> c.put("exp", String.valueOf(T + 60)))), TokenRejection.INVALID_CLAIM, "exp");
        refused(auth, token(claims(c -> c.put("iat", "yesterday"))), TokenRejection.INVALID_CLAIM, "iat");
    }

    /** The documented skew (30 s): valid until {@code exp} + 30 s, from {@code nbf}/{@code iat} − 30 s. */
    @Test
    void clockSkewBoundaries() {
        JwtAuthenticator auth = auth();
        assertEquals(
                "alice", auth.verify(token(claims(c -> c.put("exp", T - 10)))).actorId());
        assertEquals(
                "alice", auth.verify(token(claims(c -> c.put("exp", T - 29)))).actorId());
        refused(auth, token(claims(c -> c.put("exp", T - 30))), TokenRejection.EXPIRED, "exp");
        refused(auth, token(claims(c -> c.put("exp", T - 31))), TokenRejection.EXPIRED, "exp");
        assertEquals(
                "alice", auth.verify(token(claims(c -> c.put("nbf", T + 10)))).actorId());
        assertEquals(
                "alice", auth.verify(token(claims(c -> c.put("nbf", T + 30)))).actorId());
        refused(auth, token(claims(c -> c.put("nbf", T + 31))), TokenRejection.NOT_YET_VALID, "nbf");
        assertEquals(
                "alice", auth.verify(token(claims(c -> c.put("iat", T + 30)))).actorId());
        refused(auth, token(claims(c -> c.put("iat", T + 31))), TokenRejection.NOT_YET_VALID, "iat");

        Settings strict = new Settings();
        strict.clockSkew = Duration.ZERO;
        JwtAuthenticator none = auth(strict);
        refused(none, token(claims(c -> c.put("exp", T))), TokenRejection.EXPIRED, "exp");
        assertEquals(
                "alice", none.verify(token(claims(c -> c.put("exp", T + 1)))).actorId());
        refused(none, token(claims(c -> c.put("nbf", T + 1))), TokenRejection.NOT_YET_VALID, "nbf");
        assertEquals("alice", none.verify(token(claims(c -> c.put("nbf", T)))).actorId());
    }

    // ------------------------------------------------------------------------------------------ reasons

    @Test
    void everyRefusalNamesItsReasonAndNeverAValue() {
        JwtAuthenticator auth = auth();
        assertEquals(
                TokenRejection.MISSING_TOKEN.code,
                assertThrows(
                                SyncError.class,
                                () -> auth.authenticateToken(null).await().indefinitely())
                        .details()
                        .get("reason"));
        refused(auth, token(claims(c -> c.put("iss", "https://evil.test/"))), TokenRejection.ISSUER, null);
        refused(auth, token(claims(c -> c.remove("iss"))), TokenRejection.MISSING_CLAIM, "iss");
        refused(auth, token(claims(c -> c.put("aud", List.of("x", "y")))), TokenRejection.AUDIENCE, null);
        refused(auth, token(claims(c -> c.remove("aud"))), TokenRejection.MISSING_CLAIM, "aud");
        refused(auth, token(claims(c -> c.put("aud", 7))), TokenRejection.INVALID_CLAIM, "aud");
        assertEquals(
                "alice",
                auth.verify(token(claims(c -> c.put("aud", List.of("x", "aud-1")))))
                        .actorId());
        refused(auth, token(claims(c -> c.remove("sub"))), TokenRejection.MISSING_CLAIM, "sub");
        refused(auth, token(claims(c -> c.put("sub", 42))), TokenRejection.INVALID_CLAIM, "sub");
        refused(
                auth,
                TestJwks.rs256(HEADER, json(claims()), TestJwks.rsa().getPrivate()),
                TokenRejection.SIGNATURE,
                null);
        Settings partitioned = new Settings();
        partitioned.partitionClaim = Optional.of("tenant");
        refused(auth(partitioned), token(claims()), TokenRejection.MISSING_CLAIM, "tenant");

        // a JWKS document as the static key: keys by kid
        Settings jwks = new Settings();
        jwks.publicKey = Optional.of(TestJwks.jwksDocument(KEYS, "k1"));
        JwtAuthenticator byKid = auth(jwks);
        String k1 = TestJwks.rs256("{\"alg\":\"RS256\",\"kid\":\"k1\"}", json(claims()), KEYS.getPrivate());
        assertEquals("alice", byKid.verify(k1).actorId());
        refused(
                byKid,
                TestJwks.rs256("{\"alg\":\"RS256\",\"kid\":\"k2\"}", json(claims()), KEYS.getPrivate()),
                TokenRejection.UNKNOWN_KEY,
                null);

        // the counter behind syncular_auth_rejections_total{reason}
        assertEquals(
                4.0,
                registry.get("syncular.auth.rejections")
                        .tag("reason", "missing_claim")
                        .counter()
                        .count());
        assertEquals(
                1.0,
                registry.get("syncular.auth.rejections")
                        .tag("reason", "issuer")
                        .counter()
                        .count());
    }

    /** Identity text is used as sent or refused, never trimmed ("alice\u0000" must not become alice). */
    @Test
    void claimsWithControlCharactersOrSurroundingWhitespaceAreRefused() {
        Settings s = new Settings();
        s.partitionClaim = Optional.of("tenant");
        s.scopeClaims = Map.of("list_id", "lists");
        JwtAuthenticator auth = auth(s);
        Consumer<Map<String, Object>> tenant = c -> c.put("tenant", "acme");
        assertEquals("alice", auth.verify(token(claims(tenant))).actorId());
        for (String bad : List.of(
                "alice\u0000",
                " alice",
                "alice ",
                "  alice  ",
                "al\u0007ice",
                "alice\u007f",
                "alice\n",
                "\talice",
                "\u00a0alice",
                "alice\u2003",
                "")) {
            refused(auth, token(claims(tenant.andThen(c -> c.put("sub", bad)))), TokenRejection.INVALID_CLAIM, "sub");
            refused(auth, token(claims(c -> c.put("tenant", bad))), TokenRejection.INVALID_CLAIM, "tenant");
            if (!bad.isEmpty()) {
                refused(
                        auth,
                        token(claims(tenant.andThen(
                                c -> c.put("syncular_scopes", Map.of("list_id", List.of("l1", bad)))))),
                        TokenRejection.INVALID_CLAIM,
                        "syncular_scopes");
                refused(
                        auth,
                        token(claims(tenant.andThen(c -> c.put("syncular_scopes", Map.of(bad, List.of("l1")))))),
                        TokenRejection.INVALID_CLAIM,
                        "syncular_scopes");
                refused(
                        auth,
                        token(claims(tenant.andThen(c -> c.put("lists", bad)))),
                        TokenRejection.INVALID_CLAIM,
                        "lists");
            }
        }
        // inner spaces and non-ASCII letters are ordinary text
        assertEquals(
                "Alice Ünal",
                auth.verify(token(claims(tenant.andThen(c -> c.put("sub", "Alice Ünal")))))
                        .actorId());
        // a scopes claim of the wrong shape stays 403 sync.forbidden (the token is genuine, its grant unusable)
        SyncError shape = assertThrows(
                SyncError.class,
                () -> auth.verify(token(claims(tenant.andThen(c -> c.put("syncular_scopes", Map.of("list_id", 7)))))));
        assertEquals(ErrorCode.FORBIDDEN, shape.code());
        assertEquals(Map.of("claim", "syncular_scopes"), shape.details());
    }

    // ------------------------------------------------------------------------------------------ syntax

    /** Refused before any key lookup ({@link CompactJws}), so a JWKS is never asked about them. */
    @Test
    void tokensThatAreNotAJwsAreMalformed() throws Exception {
        JwtAuthenticator auth = auth();
        String payload = b64(json(claims()));
        String signed = token(claims());
        String sig = signed.substring(signed.lastIndexOf('.') + 1);
        List<String> malformed = List.of(
                "abc.def.ghi",
                "not-a-jwt",
                "a.b",
                "a.b.c.d",
                ".b.c",
                "a..c",
                b64(HEADER) + "." + payload + ".", // no signature
                "!!!." + payload + "." + sig, // not base64url
                b64(HEADER) + "=." + payload + "." + sig, // padding
                b64(HEADER) + "." + payload + "." + sig + "*",
                b64("not json") + "." + payload + "." + sig,
                b64("[\"RS256\"]") + "." + payload + "." + sig,
                b64("{\"alg\":\"RS256\",\"alg\":\"RS256\"}") + "." + payload + "." + sig, // duplicate member
                b64("{\"typ\":\"JWT\"}") + "." + payload + "." + sig, // no alg
                b64("{\"alg\":256}") + "." + payload + "." + sig,
                TestJwks.b64u(new byte[] {'{', '"', 'a', 'l', 'g', '"', ':', '"', (byte) 0xff, '"', '}'}) + "."
                        + payload + "." + sig,
                b64(HEADER) + "." + b64("not json") + "." + sig,
                b64(HEADER) + "." + b64("[1,2]") + "." + sig,
                TestJwks.rs256("{\"alg\":\"RS256\",\"kid\":7}", json(claims()), KEYS.getPrivate()),
                TestJwks.rs256("{\"alg\":\"RS256\",\"crit\":[\"exp\"],\"exp\":1}", json(claims()), KEYS.getPrivate()),
                TestJwks.rs256(
                        "{\"alg\":\"RS256\",\"b64\":false,\"crit\":[\"b64\"]}", json(claims()), KEYS.getPrivate()),
                "x".repeat(CompactJws.MAX_TOKEN_CHARS + 1));
        for (String t : malformed) {
            refused(auth, t, TokenRejection.MALFORMED, null);
        }
        // alg none, a symmetric alg keyed with the public key, an algorithm outside the allow-list
        refused(auth, b64("{\"alg\":\"none\"}") + "." + payload + ".", TokenRejection.ALGORITHM, null);
        refused(auth, b64("{\"alg\":\"none\"}") + "." + payload + "." + sig, TokenRejection.ALGORITHM, null);
        String hsInput = b64("{\"alg\":\"HS256\",\"typ\":\"JWT\"}") + "." + payload;
        for (byte[] secret :
                List.of(PEM.getBytes(StandardCharsets.UTF_8), KEYS.getPublic().getEncoded())) {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            String hs = hsInput + "." + TestJwks.b64u(mac.doFinal(hsInput.getBytes(StandardCharsets.US_ASCII)));
            refused(auth, hs, TokenRejection.ALGORITHM, null);
        }
        Signature rs384 = Signature.getInstance("SHA384withRSA");
        rs384.initSign(KEYS.getPrivate());
        String rsInput = b64("{\"alg\":\"RS384\"}") + "." + payload;
        rs384.update(rsInput.getBytes(StandardCharsets.US_ASCII));
        refused(auth, rsInput + "." + TestJwks.b64u(rs384.sign()), TokenRejection.ALGORITHM, null);
    }

    /** Keys in the token's header are never used: an attacker's embedded {@code jwk}/{@code jku}/{@code x5u}. */
    @Test
    void headerKeysAreIgnored() {
        KeyPair attacker = TestJwks.rsa();
        String jwk = TestJwks.jwksDocument(attacker, "evil");
        String embedded = jwk.substring(jwk.indexOf('[') + 1, jwk.lastIndexOf(']'));
        JwtAuthenticator auth = auth();
        for (String header : List.of(
                "{\"alg\":\"RS256\",\"jwk\":" + embedded + "}",
                "{\"alg\":\"RS256\",\"jku\":\"http://127.0.0.1:1/evil.json\"}",
                "{\"alg\":\"RS256\",\"x5u\":\"http://127.0.0.1:1/evil.pem\"}")) {
            refused(
                    auth,
                    TestJwks.rs256(header, json(claims()), attacker.getPrivate()),
                    TokenRejection.SIGNATURE,
                    null);
        }
    }

    /** A key whose type does not fit the token's algorithm is no candidate: an ES256 token against an RSA key. */
    @Test
    void algorithmAndKeyTypeMustFit() throws Exception {
        Settings s = new Settings();
        s.algorithms = List.of("RS256", "ES256");
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"));
        KeyPair ec = g.generateKeyPair();
        Signature es = Signature.getInstance("SHA256withECDSAinP1363Format");
        es.initSign(ec.getPrivate());
        String input = b64("{\"alg\":\"ES256\"}") + "." + b64(json(claims()));
        es.update(input.getBytes(StandardCharsets.US_ASCII));
        String token = input + "." + TestJwks.b64u(es.sign());
        refused(auth(s), token, TokenRejection.UNKNOWN_KEY, null);
        s.publicKey = Optional.of("-----BEGIN PUBLIC KEY-----\n"
                + Base64.getMimeEncoder().encodeToString(ec.getPublic().getEncoded()) + "\n-----END PUBLIC KEY-----");
        assertEquals("alice", auth(s).verify(token).actorId());
    }

    @Test
    void bearerHeaderParsing() {
        assertEquals("t.k.n", JwtAuthenticator.bearer("Bearer t.k.n"));
        assertEquals("t.k.n", JwtAuthenticator.bearer("  bearer   t.k.n "));
        assertNull(JwtAuthenticator.bearer(null));
        assertNull(JwtAuthenticator.bearer("Bearer "));
        assertNull(JwtAuthenticator.bearer("Basic dXNlcjpwdw=="));
    }

    @Test
    void wrongConfigurationFailsStartUp() {
        Settings none = new Settings();
        none.publicKey = Optional.empty();
        assertThrows(ConfigurationException.class, () -> JwtAuthenticator.fromConfig(none, registry));
        Settings two = new Settings();
        two.jwksUrl = Optional.of("https://idp.example.com/jwks.json");
        ConfigurationException e =
                assertThrows(ConfigurationException.class, () -> JwtAuthenticator.fromConfig(two, registry));
        assertTrue(e.getMessage().contains("syncular.auth.jwt.jwks-url"), e.getMessage());
        Settings alg = new Settings();
        alg.algorithms = List.of("XS999");
        assertThrows(ConfigurationException.class, () -> JwtAuthenticator.fromConfig(alg, registry));
        Settings hmac = new Settings();
        hmac.algorithms = List.of("HS256");
        assertThrows(ConfigurationException.class, () -> JwtAuthenticator.fromConfig(hmac, registry));
        Settings garbage = new Settings();
        garbage.publicKey = Optional.of("-----BEGIN PUBLIC KEY-----\nnot a key\n-----END PUBLIC KEY-----");
        ConfigurationException key =
                assertThrows(ConfigurationException.class, () -> JwtAuthenticator.fromConfig(garbage, registry));
        assertTrue(key.getMessage().contains("syncular.auth.jwt.public-key"), key.getMessage());
        Settings url = new Settings();
        url.publicKey = Optional.empty();
        url.jwksUrl = Optional.of("ftp://idp.example.com/jwks.json");
        assertThrows(ConfigurationException.class, () -> JwtAuthenticator.fromConfig(url, registry));
        Settings interval = new Settings();
        interval.publicKey = Optional.empty();
        interval.jwksUrl = Optional.of("https://idp.example.com/jwks.json");
        interval.minRefetch = Duration.ZERO;
        assertThrows(ConfigurationException.class, () -> JwtAuthenticator.fromConfig(interval, registry));
    }
}
