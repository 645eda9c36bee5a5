package dev.syncular.server.observability;

import dev.syncular.server.sync.ScopeResolver;
import dev.syncular.server.sync.SyncRequestContext;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.jboss.logging.Logger;

/**
 * Makes scope-resolver failures visible. §3.2 requires a failing {@code resolveScopes} to be an empty result:
 * every pull of the request is revoked (§3.3, clients purge the data) and its writes are forbidden — so an
 * outage of the host's authorization service would silently make every client purge. {@link #observe} wraps
 * the host's resolver: every failure is counted ({@code syncular.scope_resolver.failures}) and logged with its
 * stack trace, at most once per {@link #LOG_EVERY_MS} (the log line says how many were not logged since).
 * The engine's §3.2 behaviour is unchanged.
 */
@ApplicationScoped
public class ScopeResolverFailures {
    private static final Logger LOG = Logger.getLogger(ScopeResolverFailures.class);
    static final long LOG_EVERY_MS = 10_000;

    private final Counter failures;
    private final AtomicLong lastLoggedMs = new AtomicLong(Long.MIN_VALUE / 2);
    private final AtomicLong unlogged = new AtomicLong();

    @Inject
    public ScopeResolverFailures(MeterRegistry registry) {
        failures = Counter.builder("syncular.scope_resolver.failures")
                .description(
                        "Scope resolutions that failed (§3.2: the request's pulls were revoked, its writes forbidden)")
                .register(registry);
    }

    /** {@code resolver}, with each of its failures (a failed {@code Uni} or a throw) counted and logged. */
    public ScopeResolver observe(ScopeResolver resolver) {
        return new ScopeResolver() {
            @Override
            public Uni<Map<String, List<String>>> resolveScopes(String actorId, String partition) {
                return Uni.createFrom()
                        .deferred(() -> resolver.resolveScopes(actorId, partition))
                        .onFailure()
                        .invoke(ScopeResolverFailures.this::failed);
            }

            @Override
            public Uni<Map<String, List<String>>> resolveScopes(SyncRequestContext ctx) {
                return Uni.createFrom()
                        .deferred(() -> resolver.resolveScopes(ctx))
                        .onFailure()
                        .invoke(ScopeResolverFailures.this::failed);
            }
        };
    }

    private void failed(Throwable e) {
        failures.increment();
        long now = System.currentTimeMillis();
        long last = lastLoggedMs.get();
        if (now - last >= LOG_EVERY_MS && lastLoggedMs.compareAndSet(last, now)) {
            LOG.errorf(
                    e,
                    "scope resolution failed: the request's subscriptions are revoked and its writes forbidden"
                            + " (SSP2 §3.2); %d further failures were not logged since the last report",
                    unlogged.getAndSet(0));
        } else {
            unlogged.incrementAndGet();
        }
    }
}
