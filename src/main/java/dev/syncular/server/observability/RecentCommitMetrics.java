package dev.syncular.server.observability;

import dev.syncular.server.storage.RecentCommits;
import dev.syncular.server.storage.SyncStorage;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.function.ToDoubleFunction;

/**
 * Micrometer meters of the recent-commit cache ({@link RecentCommits}, {@code syncular.storage.recent-commits}):
 * {@code syncular.pull.recent.windows} by {@code result} — {@code hit} for a §4.5 window answered from this
 * pod's own newest commits, {@code miss} for one read from the log — {@code syncular.pull.recent.bytes}, the
 * estimated bytes held, and {@code syncular.realtime.fanout.recent} by {@code result}: the §8.2 fan-out's reads of a
 * notified commit answered the same way or read from the log. A low hit rate on a pod means its pulls follow other
 * pods' pushes (or the budget is too small for its hot partitions).
 */
@Startup // meters exported from the start, at zero
@ApplicationScoped
public class RecentCommitMetrics {

    @Inject
    public RecentCommitMetrics(MeterRegistry registry, SyncStorage storage) {
        RecentCommits recent = storage.recentCommits();
        String windows = "Pull windows answered from this pod's recent commits (hit) or read from the log (miss)";
        results(registry, "syncular.pull.recent.windows", windows, recent, RecentCommits::hits, RecentCommits::misses);
        String fanout = "Realtime fan-out reads answered from this pod's recent commits (hit) or the log (miss)";
        results(
                registry,
                "syncular.realtime.fanout.recent",
                fanout,
                recent,
                RecentCommits::commitHits,
                RecentCommits::commitMisses);
        Gauge.builder("syncular.pull.recent.bytes", recent, RecentCommits::bytes)
                .strongReference(true)
                .description("Estimated bytes of recent commits held for pulls")
                .baseUnit("bytes")
                .register(registry);
    }

    /** One counter {@code name} tagged {@code result=hit} and one tagged {@code result=miss}. */
    private static void results(
            MeterRegistry registry,
            String name,
            String description,
            RecentCommits recent,
            ToDoubleFunction<RecentCommits> hits,
            ToDoubleFunction<RecentCommits> misses) {
        FunctionCounter.builder(name, recent, hits)
                .description(description)
                .tag("result", "hit")
                .register(registry);
        FunctionCounter.builder(name, recent, misses)
                .description(description)
                .tag("result", "miss")
                .register(registry);
    }
}
