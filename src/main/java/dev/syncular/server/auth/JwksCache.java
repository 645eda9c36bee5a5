package dev.syncular.server.auth;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * The key set of a JWKS URL as a cache, one per pod, shared by every request: fetched at start-up and then every
 * {@code jwks-refresh-interval} in the background, so a request whose {@code kid} is known never waits for the
 * network, however slow the identity provider is.
 *
 * <ul>
 *   <li><b>Unknown {@code kid}</b> (a key rotation): at most one refetch per {@code jwks-min-refetch-interval}.
 *       Requests arriving while a fetch is under way wait for that fetch (none starts its own); past the
 *       limit they are answered from the cached set at once ({@code unknown_key}), without any outbound call.</li>
 *   <li><b>Outage</b> (an error status, a timeout, a body that is too large or no JWKS): the last good key set
 *       stays in use; the failure is counted ({@code syncular_jwks_fetches_total{outcome}}), logged at WARN at
 *       most once per {@link #WARN_EVERY_MS}; a failed background refresh is retried after
 *       {@code jwks-min-refetch-interval}. Readiness is
 *       not affected: the pod keeps serving the tokens it can verify. {@code syncular_jwks_key_set_age_seconds}
 *       shows how old the set in use is (NaN before the first success).</li>
 *   <li>Every fetch is bounded ({@link JwksFetch}); fetches never run on an event loop (one scheduler thread
 *       starts them, the JDK client completes them asynchronously).</li>
 * </ul>
 * A token that is not a JWS never gets here ({@link CompactJws}), so garbage causes no outbound call at all.
 */
final class JwksCache implements JwtKeySource {
    private static final Logger LOG = Logger.getLogger(JwksCache.class);
    static final long WARN_EVERY_MS = 5 * 60_000;

    private final JwksFetch fetch;
    private final ScheduledExecutorService scheduler;
    private final Clock clock;
    private final long refreshMs;
    private final long minRefetchMs;
    private final Map<JwksFetch.Outcome, Counter> outcomes = new EnumMap<>(JwksFetch.Outcome.class);

    private volatile VerificationKeys keys;
    private volatile long keysLoadedAtMs;
    // guarded by this
    private CompletableFuture<Boolean> inFlight;
    private long lastOnDemandMs = Long.MIN_VALUE / 2;
    private long lastWarnMs = Long.MIN_VALUE / 2;
    private int failuresSinceSuccess;
    private CompletableFuture<JwksFetch.Outcome> nextOutcome = new CompletableFuture<>();

    JwksCache(
            URI uri,
            Duration refreshInterval,
            Duration minRefetchInterval,
            Duration fetchTimeout,
            long maxBytes,
            Clock clock,
            MeterRegistry registry) {
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "syncular-jwks");
            t.setDaemon(true);
            return t;
        });
        executor.setRemoveOnCancelPolicy(true);
        this.scheduler = executor;
        this.fetch = new JwksFetch(uri, fetchTimeout, maxBytes, executor);
        this.clock = clock;
        this.refreshMs = Math.max(1, refreshInterval.toMillis());
        this.minRefetchMs = Math.max(1, minRefetchInterval.toMillis());
        for (JwksFetch.Outcome o : JwksFetch.Outcome.values()) {
            outcomes.put(
                    o,
                    Counter.builder("syncular.jwks.fetches")
                            .tag("outcome", o.code)
                            .description(
                                    "JWKS downloads by outcome (the last good key set stays in use when one fails)")
                            .register(registry));
        }
        Gauge.builder("syncular.jwks.key_set_age", this, JwksCache::ageSeconds)
                .strongReference(true)
                .baseUnit("seconds")
                .description("Age of the JWKS key set in use (NaN before the first successful fetch)")
                .register(registry);
        Gauge.builder("syncular.jwks.keys", this, c -> c.keys == null ? 0 : c.keys.size())
                .strongReference(true)
                .description("Usable verification keys in the cached JWKS")
                .register(registry);
    }

    /** Fetches at once and then keeps the set fresh in the background. */
    JwksCache start() {
        tick();
        return this;
    }

    @Override
    public CompletableFuture<VerificationKeys> keysFor(String kid) {
        VerificationKeys current = keys;
        if (current != null && current.knows(kid)) {
            return CompletableFuture.completedFuture(current);
        }
        CompletableFuture<Boolean> refetch = onDemand();
        if (refetch == null) {
            // the set as it is now, not as read above: a refetch that finished in between (and so let the rate
            // limit refuse a new one) may have brought this kid
            VerificationKeys now = keys;
            return now == null
                    ? CompletableFuture.failedFuture(TokenRejection.KEYS_UNAVAILABLE.error())
                    : CompletableFuture.completedFuture(now);
        }
        return refetch.thenApply(ok -> {
            VerificationKeys now = keys;
            if (now == null) {
                throw TokenRejection.KEYS_UNAVAILABLE.error();
            }
            return now;
        });
    }

    /** The fetch under way, else a new one when the rate limit allows it, else {@code null}. */
    private synchronized CompletableFuture<Boolean> onDemand() {
        if (inFlight != null) {
            return inFlight;
        }
        long now = clock.millis();
        if (now - lastOnDemandMs < minRefetchMs) {
            return null;
        }
        lastOnDemandMs = now;
        return begin();
    }

    /** The periodic refresh: joins a fetch under way or starts one, then plans the next. */
    private void tick() {
        CompletableFuture<Boolean> f;
        synchronized (this) {
            f = inFlight != null ? inFlight : begin();
        }
        f.thenAccept(ok -> schedule(ok ? refreshMs : Math.min(refreshMs, minRefetchMs)));
    }

    private void schedule(long delayMs) {
        try {
            scheduler.schedule(this::tick, delayMs, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closed) {
            // closed: no further refresh
        }
    }

    /** Starts a fetch; caller holds the lock. The future completes with whether it brought a key set. */
    private CompletableFuture<Boolean> begin() {
        CompletableFuture<Boolean> done = new CompletableFuture<>();
        inFlight = done;
        fetch.start().whenComplete((result, failure) -> {
            JwksFetch.Outcome outcome = failure == null ? result.outcome() : JwksFetch.Outcome.UNREACHABLE;
            boolean ok = outcome == JwksFetch.Outcome.OK;
            if (ok) {
                keys = result.keys();
                keysLoadedAtMs = clock.millis();
            }
            outcomes.get(outcome).increment();
            report(outcome);
            CompletableFuture<JwksFetch.Outcome> observed;
            synchronized (this) {
                inFlight = null;
                observed = nextOutcome;
                nextOutcome = new CompletableFuture<>();
            }
            done.complete(ok);
            observed.complete(outcome);
        });
        return done;
    }

    /** WARN on failures (the first, then at most once per {@link #WARN_EVERY_MS}), INFO when fetches work again. */
    private void report(JwksFetch.Outcome outcome) {
        long now = clock.millis();
        VerificationKeys current = keys;
        int failures;
        synchronized (this) {
            if (outcome == JwksFetch.Outcome.OK) {
                if (failuresSinceSuccess > 0) {
                    LOG.infof(
                            "JWKS fetched again after %d failed attempt(s): %d key(s) in use",
                            failuresSinceSuccess, current.size());
                }
                failuresSinceSuccess = 0;
                return;
            }
            failures = ++failuresSinceSuccess;
            if (failures > 1 && now - lastWarnMs < WARN_EVERY_MS) {
                return;
            }
            lastWarnMs = now;
        }
        if (current == null) {
            LOG.warnf(
                    "JWKS fetch failed (%s, %d attempt(s)) and no key set was ever loaded: every token is refused "
                            + "(reason keys_unavailable) until syncular.auth.jwt.jwks-url answers",
                    outcome.code, failures);
        } else {
            LOG.warnf(
                    "JWKS fetch failed (%s, %d attempt(s)); the %d key(s) fetched %d s ago stay in use",
                    outcome.code, failures, current.size(), (now - keysLoadedAtMs) / 1000);
        }
    }

    /** Completes with the outcome of the next fetch to finish (the one under way, if any): a signal for tests. */
    synchronized CompletableFuture<JwksFetch.Outcome> nextOutcome() {
        return nextOutcome;
    }

    double ageSeconds() {
        return keys == null ? Double.NaN : (clock.millis() - keysLoadedAtMs) / 1000.0;
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
    }
}
