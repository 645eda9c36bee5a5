package dev.syncular.server.observability;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Gauges whose series are a bounded top N that changes: each {@link #export} sets the series given and removes the
 * ones not given any more, so a metric carries at most as many series as the last export named ({@link TenantMetrics},
 * {@code realtime.StalestClients}). Not thread-safe: the caller exports from one thread at a time.
 */
public final class TopGauges {
    private final MeterRegistry registry;
    /** The series exported now, by metric name then tags; each gauge reads its {@link Value}. */
    private final Map<String, Map<Tags, Series>> exported = new HashMap<>();

    private record Series(Gauge gauge, Value value) {}

    /** A gauge's current value, set by {@link #export}. */
    private static final class Value {
        volatile double v;
    }

    public TopGauges(MeterRegistry registry) {
        this.registry = registry;
    }

    /** Metric {@code name} has exactly the series of {@code values} from now on. */
    public void export(String name, String description, Map<Tags, Double> values) {
        Map<Tags, Series> now = exported.computeIfAbsent(name, k -> new HashMap<>());
        Set<Tags> gone = new HashSet<>(now.keySet());
        gone.removeAll(values.keySet());
        for (Tags tags : gone) {
            registry.remove(now.remove(tags).gauge());
        }
        values.forEach((tags, v) -> {
            Series s = now.computeIfAbsent(tags, t -> {
                Value value = new Value();
                value.v = v;
                Gauge gauge = Gauge.builder(name, value, x -> x.v)
                        .description(description)
                        .tags(t)
                        .strongReference(true)
                        .register(registry);
                return new Series(gauge, value);
            });
            s.value().v = v;
        });
    }
}
