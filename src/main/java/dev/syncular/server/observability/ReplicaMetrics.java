package dev.syncular.server.observability;

import dev.syncular.server.storage.ReplicaObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.DoubleSupplier;

/**
 * Micrometer meters of the read replicas (docs/SCALING.md, "Reads from replicas"), tagged {@code replica}
 * ({@code host:port/db}, never a password): {@code syncular.replica.reads{replica,outcome}} (Prometheus
 * {@code syncular_replica_reads_total}; {@code outcome} {@code served}, {@code behind} or {@code unavailable}: the
 * pull-only rounds a replica was asked to serve), {@code syncular.replica.lag.seconds{replica}} (its replay lag as of
 * the last check) and {@code syncular.replica.in.rotation{replica}} ({@code 1} in rotation, {@code 0} out).
 */
@ApplicationScoped
public class ReplicaMetrics implements ReplicaObserver {
    private final MeterRegistry registry;
    private final Map<String, Counter> reads = new ConcurrentHashMap<>();

    @Inject
    public ReplicaMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void read(String replica, Outcome outcome) {
        reads.computeIfAbsent(replica + "\n" + outcome.tag, k -> counter(replica, outcome))
                .increment();
    }

    private Counter counter(String replica, Outcome outcome) {
        return Counter.builder("syncular.replica.reads")
                .description("Pull-only rounds a read replica was asked to serve, by outcome")
                .tag("replica", replica)
                .tag("outcome", outcome.tag)
                .register(registry);
    }

    @Override
    public void watch(String replica, DoubleSupplier lagSeconds, DoubleSupplier inRotation) {
        for (Outcome o : Outcome.values()) {
            reads.computeIfAbsent(replica + "\n" + o.tag, k -> counter(replica, o)); // exported from the start, at 0
        }
        Gauge.builder("syncular.replica.lag.seconds", lagSeconds, DoubleSupplier::getAsDouble)
                .strongReference(true) // the suppliers are referenced by nothing else
                .description("Replay lag of a read replica as of its last check, in seconds")
                .tag("replica", replica)
                .register(registry);
        Gauge.builder("syncular.replica.in.rotation", inRotation, DoubleSupplier::getAsDouble)
                .strongReference(true) // the suppliers are referenced by nothing else
                .description("Whether a read replica is in rotation (1) or not (0)")
                .tag("replica", replica)
                .register(registry);
    }
}
