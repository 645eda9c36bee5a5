package dev.syncular.server.observability;

import dev.syncular.server.operations.OperationObserver;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.runtime.Startup;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Micrometer meters of the remote operations (REMOTE.md), fed through {@link OperationObserver}:
 *
 * <ul>
 *   <li>{@code syncular.operations} (timer: count and latency, percentile histogram) by {@code operation} (the
 *       registered operation id, {@code unregistered} for any other), {@code binding} ({@code http} for
 *       {@code POST <mount>/operations}, {@code watch} for each snapshot or error a watch is answered) and
 *       {@code outcome} ({@code ok} or the answered code: a §7 {@code operation.*} code or a {@code sync.*} one).
 * </ul>
 *
 * Every tag value comes from a closed set — the registry's ids are fixed at start-up, the codes are catalogue
 * codes — never a client, actor, partition or watch id, so the series count stays bounded.
 */
@Startup // meters exported from the start
@ApplicationScoped
public class OperationMetrics implements OperationObserver {
    private final MeterRegistry registry;
    private final ConcurrentHashMap<String, Timer> timers = new ConcurrentHashMap<>();

    @Inject
    public OperationMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void answered(String operation, Binding binding, String outcome, long nanos) {
        timers.computeIfAbsent(
                        operation + '\u0000' + binding.tag() + '\u0000' + outcome,
                        k -> Timer.builder("syncular.operations")
                                .description(
                                        "Remote operations answered, by registered operation id, binding and outcome code")
                                .tag("operation", operation)
                                .tag("binding", binding.tag())
                                .tag("outcome", outcome)
                                .publishPercentileHistogram()
                                .minimumExpectedValue(Duration.ofMillis(1))
                                .maximumExpectedValue(Duration.ofSeconds(30))
                                .register(registry))
                .record(nanos, TimeUnit.NANOSECONDS);
    }
}
