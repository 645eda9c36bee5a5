package dev.syncular.server.observability;

import dev.syncular.server.sync.RoundAdmission;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Micrometer meters of the per-actor / per-partition round admission ({@link RoundAdmission}):
 * {@code syncular.fairness.refused} by {@code limit} ({@code actor_rounds}, {@code partition_rounds},
 * {@code actor_operations}, {@code pod_rounds}, {@code partition_bootstraps}, {@code pod_bootstraps}, and the push
 * rates' {@code partition_push_operations}, {@code partition_push_bytes}, {@code actor_push_operations},
 * {@code actor_push_bytes}) — rounds answered {@code sync.rate_limited} — and the gauge
 * {@code syncular.fairness.rounds.in.flight}, the admitted rounds still running on this pod. Each refusal is also
 * told to {@link TenantLoad} under its partition.
 */
@Startup // meters exported from the start, at zero
@ApplicationScoped
public class FairnessMetrics implements RoundAdmission.Listener {
    private final AtomicInteger inFlight = new AtomicInteger();
    private final Map<String, Counter> refused;
    private final TenantLoad tenants;

    @Inject
    public FairnessMetrics(MeterRegistry registry, TenantLoad tenants) {
        this.tenants = tenants;
        Gauge.builder("syncular.fairness.rounds.in.flight", inFlight, AtomicInteger::get)
                .description("Sync rounds admitted and still running on this pod")
                .strongReference(true)
                .register(registry);
        Map<String, Counter> counters = new HashMap<>();
        for (String limit : RoundAdmission.LIMITS) {
            counters.put(limit, counter(registry, limit));
        }
        refused = Map.copyOf(counters);
    }

    private static Counter counter(MeterRegistry registry, String limit) {
        return Counter.builder("syncular.fairness.refused")
                .description("Sync rounds refused with sync.rate_limited by a fairness limit")
                .tag("limit", limit)
                .register(registry);
    }

    @Override
    public void admitted() {
        inFlight.incrementAndGet();
    }

    @Override
    public void released() {
        inFlight.decrementAndGet();
    }

    @Override
    public void refused(String limit) {
        refused.get(limit).increment();
    }

    @Override
    public void refused(String partition, String limit) {
        refused(limit);
        tenants.refused(partition, limit);
    }
}
