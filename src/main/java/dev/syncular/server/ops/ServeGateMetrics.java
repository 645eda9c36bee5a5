package dev.syncular.server.ops;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Micrometer meters of the serve gate: {@code syncular.checkpoints.pending} (checkpoints at the running
 * schema version not yet activated, refreshed by every readiness probe) and
 * {@code syncular.serve_gate.refusals} by {@code reason}.
 */
@ApplicationScoped
public class ServeGateMetrics {
    private final MeterRegistry registry;
    private final AtomicInteger pending = new AtomicInteger();
    private final ConcurrentHashMap<String, Counter> refusals = new ConcurrentHashMap<>();

    @Inject
    public ServeGateMetrics(MeterRegistry registry) {
        this.registry = registry;
        Gauge.builder("syncular.checkpoints.pending", pending, AtomicInteger::get)
                .description("Backfill checkpoints at the running schema version that are not activated")
                .register(registry);
    }

    public void pending(int count) {
        pending.set(count);
    }

    public void refused(String reason) {
        refusals.computeIfAbsent(reason, r -> Counter.builder("syncular.serve_gate.refusals")
                .description("Requests refused with sync.schema_not_ready").tag("reason", r).register(registry))
                .increment();
    }
}
