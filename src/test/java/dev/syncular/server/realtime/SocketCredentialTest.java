package dev.syncular.server.realtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.cli.HttpFailure;
import dev.syncular.server.cli.ServerConnection;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.sync.ScopeResolver;
import dev.syncular.server.sync.SyncRequestContext;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestJwks;
import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.SubStart;
import dev.syncular.server.wire.SubscriptionStatus;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.smallrye.jwt.build.Jwt;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.inject.Alternative;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.net.URI;
import java.net.http.WebSocketHandshakeException;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Socket credentials with a lifetime, end to end over real WebSockets and HTTP through the running app with
 * JWT authentication (zero clock skew): a socket closes with 4401 when its token expires while HTTP answers the
 * same token 401, a fresh token reconnects, and allowed scopes narrowed by the host's resolver (§3.2
 * {@code resolveScopes}, the host's seam) apply on the very next socket round (§8.7) and to the deltas after it.
 */
@QuarkusTest
@OwnApp
@TestProfile(SocketCredentialTest.Profile.class)
public class SocketCredentialTest {
    public static final String ISSUER = "https://idp.socket-credential.test/";
    public static final String AUDIENCE = "syncular-socket-test";
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * JWT authentication against {@link TestJwks}' default endpoint (zero clock skew, the partition from the
     * {@code tenant} claim), the host's resolver {@link Acl}, the realtime token cookie and the access log for browsers,
     * and the admin API with console sign-in by a JWT's nested role claim. One app for this class,
     * {@link BrowserRealtimeAuthTest}, {@link OperationWatchAuthTest} and {@code console.ConsoleJwtTest}: each distinct
     * Quarkus test profile builds and restarts the app. The socket classes never call {@code /admin} or
     * {@code /console}; the console's sign-in checks signature, expiry, issuer and audience, not the partition claim.
     */
    public static class Profile implements QuarkusTestProfile {
        /** {@code syncular.admin.token}. */
        public static final String ADMIN_TOKEN = "sockcred-admin-" + UUID.randomUUID();
        /** {@code syncular.storage.pg-schema}. */
        public static final String PG_SCHEMA =
                "sync_sockcred_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);

        @Override
        public Map<String, String> getConfigOverrides() {
            TestJwks.ensureStarted();
            Map<String, String> m = new HashMap<>();
            m.put("syncular.storage.pg-schema", PG_SCHEMA);
            m.put("syncular.auth.jwt.jwks-url", TestJwks.jwksUrl());
            m.put("syncular.auth.jwt.issuer", ISSUER);
            m.put("syncular.auth.jwt.audience", AUDIENCE);
            m.put("syncular.auth.jwt.partition-claim", "tenant");
            m.put("syncular.auth.jwt.clock-skew", "0s");
            // browsers (BrowserRealtimeAuthTest): a cookie, and the access log on
            m.put("syncular.realtime.token-cookie", BrowserRealtimeAuthTest.COOKIE);
            m.put("quarkus.http.access-log.enabled", "true");
            // console sign-in with a JWT (ConsoleJwtTest)
            m.put("syncular.admin.token", ADMIN_TOKEN);
            m.put("syncular.admin.console.role", "syncular-admin");
            m.put("syncular.admin.console.role-claim", "realm_access.roles");
            return m;
        }

        @Override
        public Set<Class<?>> getEnabledAlternatives() {
            return Set.of(Acl.class);
        }
    }

    /**
     * The host's resolver (§3.2): the token's scopes unless the test narrowed an actor's grant, as a host ACL
     * would after a permission change.
     */
    @Alternative
    @Singleton
    public static class Acl implements ScopeResolver {
        final Map<String, Map<String, List<String>>> narrowed = new ConcurrentHashMap<>();

        @Override
        public Uni<Map<String, List<String>>> resolveScopes(SyncRequestContext ctx) {
            Map<String, List<String>> override = narrowed.get(ctx.partition() + "/" + ctx.actorId());
            Map<String, List<String>> granted = ctx.grantedScopes();
            return Uni.createFrom().item(override != null ? override : granted == null ? Map.of() : granted);
        }

        @Override
        public Uni<Map<String, List<String>>> resolveScopes(String actorId, String partition) {
            return Uni.createFrom().failure(new IllegalStateException("scopes come with the request context"));
        }
    }

    @TestHTTPResource("/")
    URI base;

    @Inject
    SchemaWindow window;

    @Inject
    Acl acl;

    String tenant;

    @BeforeEach
    void freshTenant() {
        tenant = "t-" + UUID.randomUUID();
    }

    String token(String actor, Instant expiresAt) {
        return Jwt.issuer(ISSUER)
                .audience(AUDIENCE)
                .subject(actor)
                .claim("tenant", tenant)
                .claim("syncular_scopes", Map.of("list_id", List.of("l1", "l2")))
                .expiresAt(expiresAt)
                .jws()
                .keyId(TestJwks.KID)
                .sign(TestJwks.privateKey());
    }

    RealtimeSocket connect(String token, String clientId) {
        return RealtimeSocket.connect(
                URI.create(base.toString().replaceFirst("^http", "ws") + "realtime?clientId=" + clientId),
                Map.of("Authorization", "Bearer " + token));
    }

    /** The SSP2 HTTP binding with a bearer token. */
    record Bearer(ServerConnection http) implements SyncTestClient.Transport {
        Bearer(String base, String token) {
            this(new ServerConnection(base, Map.of("Authorization", "Bearer " + token), null));
        }

        @Override
        public byte[] roundTrip(SyncTestClient client, byte[] request) {
            return http.sync(request);
        }

        @Override
        public byte[] downloadSegment(SyncTestClient client, String segmentId, String scopesHeader) {
            return http.segment(segmentId, scopesHeader);
        }
    }

    /** Rounds over {@code socket} (§8.7). */
    record OverSocket(RealtimeSocket socket) implements SyncTestClient.Transport {
        @Override
        public byte[] roundTrip(SyncTestClient client, byte[] request) {
            try {
                return socket.round(request, 1 << 16);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public byte[] downloadSegment(SyncTestClient client, String segmentId, String scopesHeader) {
            throw new UnsupportedOperationException("no segments in these tests");
        }
    }

    static Map<String, Object> todo(String id, String list) {
        return Map.of(
                "id", id, "list_id", list, "title", "t " + id, "done", false, "position", 1L, "updated_at_ms", 1L);
    }

    @Test
    void aSocketClosesWith4401WhenItsTokenExpiresAndAFreshTokenReconnects() throws Exception {
        String clientId = "c-exp-" + UUID.randomUUID();
        Instant exp = Instant.now().plusSeconds(2);
        String shortLived = token("bob", exp);
        SyncTestClient bob =
                new SyncTestClient(window.current(), new Bearer(base.toString(), shortLived), "bob", clientId);
        bob.subscribe("s1", "todos", Map.of("list_id", List.of("l1")));
        bob.syncUntilIdle();

        RealtimeSocket s = connect(shortLived, clientId);
        s.nextEvent("hello");
        // a socket round while the token is valid is served
        new SyncTestClient(window.current(), new OverSocket(s), "bob", clientId).sync();

        int code = s.closed.get(RealtimeSocket.WAIT.toSeconds(), TimeUnit.SECONDS);
        long closedAt = System.currentTimeMillis();
        assertEquals(CredentialLifetime.EXPIRED_CODE, code, s.closeReason());
        assertEquals("sync.auth_required: credential expired", s.closeReason());
        // exp has whole seconds; the close comes at exp (no skew here), never before it
        assertTrue(
                closedAt >= exp.getEpochSecond() * 1000,
                "closed " + (exp.getEpochSecond() * 1000 - closedAt) + " ms before exp");

        // HTTP refuses the same token, and so does a new upgrade with it
        HttpFailure http = assertThrows(HttpFailure.class, bob::sync);
        assertEquals(401, http.status, http.body);
        JsonNode body = JSON.readTree(http.body);
        assertEquals("sync.auth_required", body.get("code").asText());
        assertEquals("expired", body.get("details").get("reason").asText());
        CompletionException refused = assertThrows(CompletionException.class, () -> connect(shortLived, clientId));
        assertInstanceOf(WebSocketHandshakeException.class, refused.getCause());
        assertEquals(
                401,
                ((WebSocketHandshakeException) refused.getCause()).getResponse().statusCode());

        // the client's reconnect with a fresh token works: hello, then rounds over the socket
        RealtimeSocket again = connect(token("bob", Instant.now().plusSeconds(300)), clientId);
        assertEquals(
                clientId, again.nextEvent("hello").get("data").get("clientId").asText());
        SyncTestClient overSocket = new SyncTestClient(window.current(), new OverSocket(again), "bob", clientId);
        overSocket.subscribe("s1", "todos", Map.of("list_id", List.of("l1")));
        overSocket.syncUntilIdle();
        assertEquals(SubscriptionStatus.ACTIVE, overSocket.subscriptions.get("s1").status);
        assertFalse(again.closed.isDone());
        again.ws.abort();
    }

    @Test
    void scopesNarrowedByTheResolverApplyOnTheNextSocketRoundAndItsDeltas() throws Exception {
        String longLived = token("bob", Instant.now().plusSeconds(300));
        SyncTestClient alice = new SyncTestClient(
                window.current(),
                new Bearer(base.toString(), token("alice", Instant.now().plusSeconds(300))),
                "alice",
                "c-a-" + UUID.randomUUID());
        alice.upsert("todos", todo("a1", "l1"), null);
        alice.upsert("todos", todo("a2", "l2"), null);
        alice.syncUntilIdle();

        String clientId = "c-narrow-" + UUID.randomUUID();
        RealtimeSocket s = connect(longLived, clientId);
        s.nextEvent("hello");
        SyncTestClient bob = new SyncTestClient(window.current(), new OverSocket(s), "bob", clientId);
        bob.subscribe("s1", "todos", Map.of("list_id", List.of("l1")));
        bob.subscribe("s2", "todos", Map.of("list_id", List.of("l2")));
        bob.syncUntilIdle();
        assertEquals(SubscriptionStatus.ACTIVE, bob.subscriptions.get("s1").status);
        assertTrue(bob.table("todos").containsKey("a1"));

        // the host narrows bob's grant to l2 while the socket stays open: the next socket round revokes s1
        acl.narrowed.put(tenant + "/bob", Map.of("list_id", List.of("l2")));
        bob.sync();
        assertEquals(SubscriptionStatus.REVOKED, bob.subscriptions.get("s1").status);
        assertEquals("sync.scope_revoked", bob.subscriptions.get("s1").reasonCode);
        assertEquals(SubscriptionStatus.ACTIVE, bob.subscriptions.get("s2").status);
        // and the round re-registered the socket: after the post-round ack, an l1 commit is no delta, an l2 one is
        long head = bob.subscriptions.get("s2").cursor;
        s.ack(head);
        bob.sync(); // answered after the ack was applied (frames of one socket are handled in order)
        alice.upsert("todos", todo("a3", "l1"), null);
        alice.sync();
        alice.upsert("todos", todo("a4", "l2"), null);
        alice.sync();
        Message delta = s.nextDelta();
        SubStart start = assertInstanceOf(SubStart.class, delta.frames().get(1));
        assertEquals("s2", start.id());
        CommitFrame commit = assertInstanceOf(CommitFrame.class, delta.frames().get(2));
        assertEquals("a4", commit.changes().get(0).rowId(), "the l1 commit a3 reached no revoked registration");
        s.ws.abort();
    }
}
