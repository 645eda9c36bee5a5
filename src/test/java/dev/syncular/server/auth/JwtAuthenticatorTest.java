package dev.syncular.server.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.config.SyncularConfig;
import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.sync.SyncRequestContext;
import dev.syncular.server.testsupport.TestJwks;
import io.quarkus.runtime.configuration.ConfigurationException;
import io.smallrye.jwt.build.Jwt;
import java.security.KeyPair;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** {@link JwtAuthenticator} with a configured PEM public key (no HTTP): claims → actor, partition, scopes. */
class JwtAuthenticatorTest {
    private static final KeyPair KEYS = TestJwks.rsa();
    private static final String PEM = "-----BEGIN PUBLIC KEY-----\n"
            + Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(KEYS.getPublic().getEncoded())
            + "\n-----END PUBLIC KEY-----";

    /** {@code syncular.auth.jwt.*} with defaults, a PEM key and {@code iss}/{@code aud} checks. */
    static class Settings implements SyncularConfig.Jwt {
        Optional<String> jwksUrl = Optional.empty();
        Optional<String> publicKey = Optional.of(PEM);
        String actorClaim = "sub";
        Optional<String> partitionClaim = Optional.empty();
        Map<String, String> scopeClaims = Map.of();
        List<String> algorithms = List.of("RS256");

        public Optional<String> jwksUrl() { return jwksUrl; }
        public Optional<String> publicKey() { return publicKey; }
        public Optional<String> publicKeyLocation() { return Optional.empty(); }
        public Optional<String> issuer() { return Optional.of("iss-1"); }
        public Optional<List<String>> audience() { return Optional.of(List.of("aud-1", "aud-2")); }
        public Duration clockSkew() { return Duration.ofSeconds(30); }
        public List<String> signatureAlgorithms() { return algorithms; }
        public Duration jwksRefreshInterval() { return Duration.ofMinutes(60); }
        public String actorClaim() { return actorClaim; }
        public Optional<String> partitionClaim() { return partitionClaim; }
        public String partition() { return "fixed"; }
        public String scopesClaim() { return "syncular_scopes"; }
        public Map<String, String> scopeClaims() { return scopeClaims; }
    }

    private static io.smallrye.jwt.build.JwtClaimsBuilder claims() {
        return Jwt.issuer("iss-1").audience("aud-2").subject("alice").expiresAt(Instant.now().plusSeconds(60));
    }

    private static String sign(io.smallrye.jwt.build.JwtClaimsBuilder b) {
        return b.sign(KEYS.getPrivate());
    }

    @Test
    void pemKeyFixedPartitionAndScopesClaim() {
        SyncRequestContext ctx = new JwtAuthenticator(new Settings()).verify(
                sign(claims().claim("syncular_scopes", Map.of("list_id", List.of("l1", "l2"), "team_id", List.of("*")))));
        assertEquals("alice", ctx.actorId());
        assertEquals("fixed", ctx.partition());
        assertEquals(Map.of("list_id", List.of("l1", "l2"), "team_id", List.of("*")), ctx.grantedScopes());
    }

    @Test
    void claimMappingAndConfiguredActorAndPartitionClaims() {
        Settings s = new Settings();
        s.actorClaim = "email";
        s.partitionClaim = Optional.of("org");
        s.scopeClaims = Map.of("list_id", "lists", "team_id", "team");
        SyncRequestContext ctx = new JwtAuthenticator(s).verify(sign(claims().claim("email", "a@example.com")
                .claim("org", "acme").claim("lists", List.of("l1", "l2")).claim("team", "t1")
                .claim("syncular_scopes", Map.of("list_id", List.of("l3")))));
        assertEquals("a@example.com", ctx.actorId());
        assertEquals("acme", ctx.partition());
        assertEquals(List.of("l3", "l1", "l2"), ctx.grantedScopes().get("list_id"));
        assertEquals(List.of("t1"), ctx.grantedScopes().get("team_id"));
    }

    @Test
    void noScopeClaimsGrantNothing() {
        SyncRequestContext ctx = new JwtAuthenticator(new Settings()).verify(sign(claims()));
        assertEquals(Map.of(), ctx.grantedScopes());
        assertEquals(Map.of(), new JwtScopeResolver().resolveScopes(ctx).await().indefinitely());
        // without the request context there is no token: fail (revokes), never grant
        assertThrows(IllegalStateException.class,
                () -> new JwtScopeResolver().resolveScopes("alice", "fixed").await().indefinitely());
        // a context from another authenticator (no granted scopes) grants nothing either
        assertEquals(Map.of(), new JwtScopeResolver().resolveScopes(new SyncRequestContext("a", "p")).await().indefinitely());
        assertNull(new SyncRequestContext("a", "p").grantedScopes());
    }

    @Test
    void rejectionsAreStaticCatalogueErrors() {
        JwtAuthenticator auth = new JwtAuthenticator(new Settings());
        for (String bad : List.of(sign(claims().issuer("other")), sign(claims().audience("other")),
                sign(claims().expiresAt(Instant.now().minusSeconds(120))), sign(claims().remove("sub")),
                claims().sign(TestJwks.rsa().getPrivate()), "a.b.c")) {
            SyncError e = assertThrows(SyncError.class, () -> auth.verify(bad));
            assertEquals(ErrorCode.AUTH_REQUIRED, e.code());
            assertEquals(JwtAuthenticator.INVALID, e.getMessage());
            assertTrue(e.details().isEmpty());
        }
        // within the clock skew an expired token still passes
        assertEquals("alice", auth.verify(sign(claims().issuedAt(Instant.now().minusSeconds(60)).expiresAt(Instant.now().minusSeconds(5)))).actorId());
        SyncError shape = assertThrows(SyncError.class,
                () -> auth.verify(sign(claims().claim("syncular_scopes", Map.of("list_id", 7)))));
        assertEquals(ErrorCode.FORBIDDEN, shape.code());
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
        assertThrows(ConfigurationException.class, () -> new JwtAuthenticator(none));
        Settings two = new Settings();
        two.jwksUrl = Optional.of("https://idp.example.com/jwks.json");
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> new JwtAuthenticator(two));
        assertTrue(e.getMessage().contains("syncular.auth.jwt.jwks-url"), e.getMessage());
        Settings alg = new Settings();
        alg.algorithms = List.of("XS999");
        assertThrows(ConfigurationException.class, () -> new JwtAuthenticator(alg));
        Settings hmac = new Settings();
        hmac.algorithms = List.of("HS256");
        assertThrows(ConfigurationException.class, () -> new JwtAuthenticator(hmac));
        Settings garbage = new Settings();
        garbage.publicKey = Optional.of("-----BEGIN PUBLIC KEY-----\nnot a key\n-----END PUBLIC KEY-----");
        ConfigurationException key = assertThrows(ConfigurationException.class, () -> new JwtAuthenticator(garbage));
        assertTrue(key.getMessage().contains("syncular.auth.jwt.public-key"), key.getMessage());
    }
}
