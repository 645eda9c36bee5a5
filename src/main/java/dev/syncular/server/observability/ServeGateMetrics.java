package dev.syncular.server.observability;

import dev.syncular.server.sync.ServeGates;
import dev.syncular.server.sync.SyncObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Micrometer meters of the serve gate: {@code syncular.checkpoints.pending} (checkpoints at the running
 * schema version not yet activated, refreshed by every readiness probe) and
 * {@code syncular.serve_gate.refusals} by {@code reason} (told by the engine through {@link SyncObserver}).
 */
@Startup // meters exported from the start, at zero
@ApplicationScoped
public class ServeGateMetrics implements SyncObserver {
    private final MeterRegistry registry;
    private final AtomicInteger pending = new AtomicInteger();
    private final ConcurrentHashMap<String, Counter> refusals = new ConcurrentHashMap<>();

    @Inject
    public ServeGateMetrics(MeterRegistry registry) {
        this.registry = registry;
        Gauge.builder("syncular.checkpoints.pending", pending, AtomicInteger::get)
                .strongReference(true)
                .description("Backfill checkpoints at the running schema version that are not activated")
                .register(registry);
        for (String reason : List.of(
                ServeGates.SCHEMA_NEWER,
                ServeGates.CHECKPOINT_PENDING,
                ServeGates.GATE_CHANGED,
                ServeGates.WRITER_FENCED)) {
            refusals(reason); // every reason exported from the start, at zero
        }
    }

    private Counter refusals(String reason) {
        return refusals.computeIfAbsent(
                reason,
                r -> Counter.builder("syncular.serve_gate.refusals")
                        .description("Requests refused with sync.schema_not_ready")
                        .tag("reason", r)
                        .register(registry));
    }

    public void pending(int count) {
        pending.set(count);
    }

    @Override
    public void gateRefused(String partition, String reason) {
        refusals(reason).increment();
    }
}
