package dev.syncular.server.observability;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Micrometer meters of §4.6 pruning: {@code syncular.pruning.passes}, {@code syncular.pruning.commits} (commits
 * removed) and {@code syncular.pruning.horizon.lag.commits} — after the last pass of this pod, the largest number
 * of commits any partition keeps above its pruning horizon ({@code maxCommitSeq - horizonSeq}).
 */
@Startup // meters exported from the start, at zero
@ApplicationScoped
public class PruningMetrics {
    private final Counter passes;
    private final Counter pruned;
    private final AtomicLong lag = new AtomicLong();

    @Inject
    public PruningMetrics(MeterRegistry registry) {
        passes = Counter.builder("syncular.pruning.passes")
                .description("Pruning passes run")
                .register(registry);
        pruned = Counter.builder("syncular.pruning.commits")
                .description("Commits removed by pruning")
                .register(registry);
        Gauge.builder("syncular.pruning.horizon.lag.commits", lag, AtomicLong::get)
                .strongReference(true)
                .description(
                        "Largest count of commits a partition keeps above its pruning horizon, as of the last pass")
                .register(registry);
    }

    public void passed(long removedCommits, long horizonLag) {
        passes.increment();
        pruned.increment(removedCommits);
        lag.set(horizonLag);
    }
}
