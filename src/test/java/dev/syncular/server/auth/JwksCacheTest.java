package dev.syncular.server.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.errors.SyncError;
import dev.syncular.server.sync.SyncRequestContext;
import dev.syncular.server.testsupport.LogCapture;
import dev.syncular.server.testsupport.TestJwks;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quarkus.runtime.configuration.MemorySize;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link JwksCache} against a real JWKS endpoint over HTTP ({@link TestJwks}) that counts the requests it gets:
 * garbage causes no outbound call, unknown {@code kid}s share one rate-limited refetch (which picks up a key
 * rotation), outages keep the last good key set, fetches are bounded in time and size, and a slow provider does
 * not slow tokens whose key is known. The rate limit runs on a test clock; the periodic refresh on real time.
 */
class JwksCacheTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final KeyPair STRANGER = TestJwks.rsa();

    /** A clock the test moves: the rate limit and the key set's age read it. */
    static final class TestClock extends Clock {
        final AtomicLong ms =
                new AtomicLong(Instant.parse("2026-12-01T12:00:00Z").toEpochMilli());

        void advance(Duration d) {
            ms.addAndGet(d.toMillis());
        }

        @Override
        public long millis() {
            return ms.get();
        }

        @Override
        public Instant instant() {
            return Instant.ofEpochMilli(ms.get());
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }
    }

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final TestClock clock = new TestClock();
    private final List<TestJwks.Endpoint> endpoints = new ArrayList<>();
    private final List<JwtAuthenticator> authenticators = new ArrayList<>();

    @AfterEach
    void stop() {
        authenticators.forEach(JwtAuthenticator::close);
        endpoints.forEach(TestJwks.Endpoint::stop);
    }

    private TestJwks.Endpoint endpoint(String... kids) {
        TestJwks.Endpoint e = TestJwks.endpoint("cache-" + UUID.randomUUID());
        for (String kid : kids) {
            e.addKey(kid);
        }
        endpoints.add(e);
        return e;
    }

    /** Settings for {@code endpoint}: refresh 60 min, min refetch 30 s (test clock), fetch timeout 5 s, cap 256 KiB. */
    private static JwtAuthenticatorTest.Settings settings(TestJwks.Endpoint endpoint) {
        JwtAuthenticatorTest.Settings s = new JwtAuthenticatorTest.Settings();
        s.publicKey = Optional.empty();
        s.jwksUrl = Optional.of(endpoint.url());
        s.issuer = Optional.empty();
        s.audience = Optional.empty();
        return s;
    }

    private JwtAuthenticator auth(JwtAuthenticatorTest.Settings s) {
        JwtAuthenticator a = new JwtAuthenticator(s, JwtKeySource.of(s, clock, registry), Clock.systemUTC(), registry);
        authenticators.add(a);
        return a;
    }

    private static JwksCache cache(JwtAuthenticator auth) {
        return (JwksCache) auth.keySource();
    }

    /** A valid token for alice signed by {@code kid}'s key on {@code e} (real clock: exp in 5 minutes). */
    private static String token(TestJwks.Endpoint e, String kid) {
        return TestJwks.rs256(
                "{\"alg\":\"RS256\",\"kid\":\"" + kid + "\"}",
                "{\"sub\":\"alice\",\"exp\":" + (Instant.now().getEpochSecond() + 300) + "}",
                e.privateKey(kid));
    }

    /** A well-formed token naming {@code kid}, signed by a key nobody publishes. */
    private static String stranger(String kid) {
        return TestJwks.rs256(
                "{\"alg\":\"RS256\",\"kid\":\"" + kid + "\"}",
                "{\"sub\":\"mallory\",\"exp\":" + (Instant.now().getEpochSecond() + 300) + "}",
                STRANGER.getPrivate());
    }

    private static CompletableFuture<SyncRequestContext> async(JwtAuthenticator auth, String token) {
        return auth.authenticateToken(token).subscribeAsCompletionStage();
    }

    private static TokenRejection reason(CompletableFuture<SyncRequestContext> f) {
        ExecutionException e =
                assertThrows(ExecutionException.class, () -> f.get(WAIT.toMillis(), TimeUnit.MILLISECONDS));
        return TokenRejection.of(assertInstanceOf(SyncError.class, e.getCause()));
    }

    private double fetches(String outcome) {
        return registry.get("syncular.jwks.fetches")
                .tag("outcome", outcome)
                .counter()
                .count();
    }

    private static JwksFetch.Outcome await(CompletableFuture<JwksFetch.Outcome> outcome) throws Exception {
        return outcome.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
    }

    // ------------------------------------------------------------------------------------------ tests

    @Test
    void garbageTokensCauseNoOutboundCall() {
        TestJwks.Endpoint e = endpoint("k1");
        JwtAuthenticator auth = auth(settings(e));
        assertEquals("alice", auth.verify(token(e, "k1")).actorId());
        int before = e.fetches();
        assertEquals(1, before);
        String payload = TestJwks.b64u("{\"sub\":\"x\",\"exp\":9999999999}".getBytes(StandardCharsets.UTF_8));
        List<String> garbage = List.of(
                "abc.def.ghi",
                "abc",
                "a.b",
                "%%%.%%%.%%%",
                TestJwks.b64u("{\"alg\":\"none\",\"kid\":\"zzz\"}".getBytes(StandardCharsets.UTF_8)) + "." + payload
                        + ".",
                TestJwks.b64u("{\"alg\":\"HS256\",\"kid\":\"zzz\"}".getBytes(StandardCharsets.UTF_8)) + "." + payload
                        + ".c2ln",
                TestJwks.b64u("{\"alg\":\"RS256\",\"kid\":\"zzz\"".getBytes(StandardCharsets.UTF_8)) + "." + payload
                        + ".c2ln");
        List<CompletableFuture<SyncRequestContext>> answers = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            answers.add(async(auth, garbage.get(i % garbage.size())));
        }
        for (CompletableFuture<SyncRequestContext> a : answers) {
            TokenRejection r = reason(a);
            assertTrue(r == TokenRejection.MALFORMED || r == TokenRejection.ALGORITHM, String.valueOf(r));
        }
        assertEquals(before, e.fetches());
    }

    @Test
    void unknownKidsShareOneRateLimitedRefetchWhichPicksUpARotation() throws Exception {
        TestJwks.Endpoint e = endpoint("k1");
        JwtAuthenticator auth = auth(settings(e));
        assertEquals("alice", auth.verify(token(e, "k1")).actorId());
        assertEquals(1, e.fetches());

        // the provider rotates to k2 and answers slowly: 50 concurrent k2 tokens wait on one shared refetch
        e.addKey("k2").delay(Duration.ofMillis(500));
        List<CompletableFuture<SyncRequestContext>> rotated = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            rotated.add(async(auth, token(e, "k2")));
        }
        for (CompletableFuture<SyncRequestContext> f : rotated) {
            assertEquals("alice", f.get(WAIT.toMillis(), TimeUnit.MILLISECONDS).actorId());
        }
        assertEquals(2, e.fetches());

        // within the interval: unknown kids are refused from the cache, no outbound call, even once k3 exists
        e.delay(Duration.ZERO).addKey("k3");
        List<CompletableFuture<SyncRequestContext>> unknown = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            unknown.add(async(auth, i % 2 == 0 ? token(e, "k3") : stranger("kid-" + i)));
        }
        for (CompletableFuture<SyncRequestContext> f : unknown) {
            assertEquals(TokenRejection.UNKNOWN_KEY, reason(f));
        }
        assertEquals(2, e.fetches());
        assertEquals("alice", auth.verify(token(e, "k1")).actorId());

        // once the interval has passed, the next unknown kid refetches (once) and k3 is known
        clock.advance(Duration.ofSeconds(30));
        assertEquals("alice", auth.verify(token(e, "k3")).actorId());
        assertEquals(TokenRejection.UNKNOWN_KEY, reason(async(auth, stranger("kid-x"))));
        assertEquals(3, e.fetches());
        assertEquals(3.0, fetches("ok"));
    }

    @Test
    void anOutageKeepsTheLastGoodKeySet() throws Exception {
        TestJwks.Endpoint e = endpoint("k1");
        JwtAuthenticatorTest.Settings s = settings(e);
        s.fetchTimeout = Duration.ofMillis(300);
        s.maxBytes = new MemorySize(BigInteger.valueOf(4096));
        JwtAuthenticator auth = auth(s);
        JwksCache cache = cache(auth);
        assertEquals("alice", auth.verify(token(e, "k1")).actorId());
        String big = "{\"keys\":[],\"pad\":\"" + "x".repeat(5000) + "\"}";

        try (LogCapture log = LogCapture.of(JwksCache.class.getName(), Level.INFO, "none")) {
            record Mode(Runnable apply, JwksFetch.Outcome outcome) {}
            List<Mode> modes = List.of(
                    new Mode(() -> e.status(503), JwksFetch.Outcome.HTTP_ERROR),
                    new Mode(() -> e.status(404), JwksFetch.Outcome.HTTP_ERROR),
                    new Mode(() -> e.delay(Duration.ofSeconds(30)), JwksFetch.Outcome.TIMEOUT),
                    new Mode(() -> e.body("not json"), JwksFetch.Outcome.INVALID),
                    new Mode(() -> e.body("{\"keys\":[]}"), JwksFetch.Outcome.INVALID),
                    new Mode(
                            () -> e.body("{\"keys\":[{\"kty\":\"oct\",\"kid\":\"k1\",\"k\":\"c2VjcmV0\"}]}"),
                            JwksFetch.Outcome.INVALID),
                    new Mode(() -> e.body(big), JwksFetch.Outcome.TOO_LARGE),
                    new Mode(() -> e.body(big).chunked(true), JwksFetch.Outcome.TOO_LARGE));
            for (Mode mode : modes) {
                e.healthy();
                mode.apply().run();
                clock.advance(Duration.ofSeconds(30));
                CompletableFuture<JwksFetch.Outcome> outcome = cache.nextOutcome();
                long started = System.nanoTime();
                assertEquals(TokenRejection.UNKNOWN_KEY, reason(async(auth, stranger("rotated?"))));
                assertEquals(mode.outcome(), await(outcome));
                if (mode.outcome() == JwksFetch.Outcome.TIMEOUT) {
                    // bounded: the hanging provider is abandoned at the timeout, long before it would answer
                    assertTrue(System.nanoTime() - started < TimeUnit.SECONDS.toNanos(10));
                }
                // the keys fetched before the outage still verify
                assertEquals("alice", auth.verify(token(e, "k1")).actorId());
            }
            assertEquals(2.0, fetches("http_error"));
            assertEquals(1.0, fetches("timeout"));
            assertEquals(3.0, fetches("invalid"));
            assertEquals(2.0, fetches("too_large"));
            assertEquals(
                    modes.size() * 30.0,
                    registry.get("syncular.jwks.key_set_age").gauge().value());
            assertEquals(1.0, registry.get("syncular.jwks.keys").gauge().value());
            // eight failures in a row, one WARN (rate-limited), naming the outcome, never a body
            List<LogCapture.Line> warns = log.lines.stream()
                    .filter(l -> l.level().intValue() == Level.WARNING.intValue())
                    .toList();
            assertEquals(1, warns.size(), String.valueOf(log.lines));
            assertTrue(
                    warns.get(0).message().contains("http_error")
                            && warns.get(0).message().contains("stay in use"),
                    warns.get(0).message());

            e.healthy();
            clock.advance(Duration.ofSeconds(30));
            CompletableFuture<JwksFetch.Outcome> outcome = cache.nextOutcome();
            assertEquals(TokenRejection.UNKNOWN_KEY, reason(async(auth, stranger("again"))));
            assertEquals(JwksFetch.Outcome.OK, await(outcome));
            assertEquals(0.0, registry.get("syncular.jwks.key_set_age").gauge().value());
            assertTrue(
                    log.lines.stream()
                            .anyMatch(l -> l.level().intValue() == Level.INFO.intValue()
                                    && l.message().contains("fetched again")),
                    String.valueOf(log.lines));
        }
    }

    @Test
    void keysUnavailableUntilTheFirstGoodFetch() throws Exception {
        TestJwks.Endpoint e = endpoint("k1");
        e.status(503);
        JwtAuthenticator auth = auth(settings(e));
        // the first request waits for the start-up fetch or makes the one on-demand fetch of the interval
        assertEquals(TokenRejection.KEYS_UNAVAILABLE, reason(async(auth, token(e, "k1"))));
        assertEquals(TokenRejection.KEYS_UNAVAILABLE, reason(async(auth, token(e, "k1"))));
        assertTrue(
                Double.isNaN(registry.get("syncular.jwks.key_set_age").gauge().value()));
        int fetched = e.fetches();
        assertTrue(fetched <= 2, String.valueOf(fetched));
        // inside the interval: refused from the (empty) cache without another call
        for (int i = 0; i < 20; i++) {
            assertEquals(TokenRejection.KEYS_UNAVAILABLE, reason(async(auth, token(e, "k1"))));
        }
        assertEquals(fetched, e.fetches());

        e.healthy();
        clock.advance(Duration.ofSeconds(30));
        assertEquals("alice", auth.verify(token(e, "k1")).actorId());

        // a provider that is not even listening: unreachable, and the same refusal
        TestJwks.Endpoint gone = endpoint("k1");
        JwtAuthenticatorTest.Settings s = settings(gone);
        String token = token(gone, "k1");
        gone.stop();
        endpoints.remove(gone);
        JwtAuthenticator dead = auth(s);
        assertEquals(TokenRejection.KEYS_UNAVAILABLE, reason(async(dead, token)));
        assertTrue(fetches("unreachable") >= 1);
    }

    @Test
    void theKeySetIsRefreshedInTheBackground() {
        TestJwks.Endpoint e = endpoint("k1");
        JwtAuthenticatorTest.Settings s = settings(e);
        s.refresh = Duration.ofMillis(100);
        s.minRefetch = Duration.ofMillis(100);
        JwtAuthenticator auth = auth(s);
        e.awaitFetches(3, WAIT);
        // a rotation reaches the cache through the refresh alone: no request has to wait for it
        e.addKey("k2");
        int seen = e.fetches();
        e.awaitFetches(seen + 2, WAIT);
        assertEquals("alice", auth.verify(token(e, "k2")).actorId());
        // failures are retried on the same rhythm, the keys stay
        e.status(503);
        seen = e.fetches();
        e.awaitFetches(seen + 3, WAIT);
        assertEquals("alice", auth.verify(token(e, "k2")).actorId());
        assertTrue(fetches("http_error") >= 2);
    }

    /** The identity provider takes 2 s: tokens whose key is cached are answered without waiting for it. */
    @Test
    void aSlowProviderDoesNotSlowKnownKeys() throws Exception {
        TestJwks.Endpoint e = endpoint("k1");
        JwtAuthenticator auth = auth(settings(e));
        assertEquals("alice", auth.verify(token(e, "k1")).actorId());
        e.delay(Duration.ofSeconds(2));
        CompletableFuture<SyncRequestContext> waiting = async(auth, stranger("k-new")); // starts the slow refetch
        e.awaitFetches(2, WAIT);
        long worst = 0;
        for (int i = 0; i < 50; i++) {
            String t = token(e, "k1");
            long start = System.nanoTime();
            assertEquals("alice", auth.verify(t).actorId());
            worst = Math.max(worst, System.nanoTime() - start);
        }
        assertEquals(1, e.pending(), "the refetch was under way throughout");
        assertTrue(
                worst < TimeUnit.MILLISECONDS.toNanos(1000),
                "slowest known-key verification " + worst / 1_000_000 + " ms");
        assertEquals(TokenRejection.UNKNOWN_KEY, reason(waiting));
        assertEquals(2, e.fetches());
    }

    /**
     * The shared refetch, repeated ({@code -Djwks.rounds}, 30 in the suite): each time 30 concurrent waiters, exactly
     * one outbound call, all answered.
     */
    @Test
    void theSharedRefetchHoldsUnderRepetition() throws Exception {
        TestJwks.Endpoint e = endpoint("k1");
        e.delay(Duration.ofMillis(20));
        KeyPair rotated = TestJwks.rsa();
        // what is under test is the sharing, not the fetch timeout: on a loaded CI machine one 20 ms fetch can
        // take longer than the 5 s default, and a timed-out refetch rightly leaves the new kid unknown
        JwtAuthenticatorTest.Settings s = settings(e);
        s.fetchTimeout = WAIT;
        for (int round = 0; round < Integer.getInteger("jwks.rounds", 30); round++) {
            JwtAuthenticator auth = new JwtAuthenticator(
                    s,
                    JwtKeySource.of(s, clock, new SimpleMeterRegistry()),
                    Clock.systemUTC(),
                    new SimpleMeterRegistry());
            try {
                assertEquals("alice", auth.verify(token(e, "k1")).actorId());
                String kid = "r" + round;
                e.addKey(kid, rotated);
                int before = e.fetches();
                List<CompletableFuture<SyncRequestContext>> waiting = new ArrayList<>();
                for (int i = 0; i < 30; i++) {
                    waiting.add(async(auth, i % 3 == 0 ? stranger("x" + round) : token(e, kid)));
                }
                for (int i = 0; i < waiting.size(); i++) {
                    if (i % 3 == 0) {
                        assertEquals(TokenRejection.UNKNOWN_KEY, reason(waiting.get(i)), "round " + round);
                    } else {
                        assertEquals(
                                "alice",
                                waiting.get(i)
                                        .get(WAIT.toMillis(), TimeUnit.MILLISECONDS)
                                        .actorId());
                    }
                }
                assertEquals(before + 1, e.fetches(), "round " + round);
            } finally {
                auth.close();
                e.removeKey("r" + round);
            }
        }
    }
}
