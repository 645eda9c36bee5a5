package dev.syncular.server.observability;

import dev.syncular.server.sync.SyncObserver;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.runtime.Startup;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The visibility lag of every commit at every subscribed client: from the commit's own time ({@code createdAtMs},
 * taken in its push transaction) until the client has it — its §8.2 delta handed to the client's socket, or a
 * pull (§4.5) whose cursor passes it released to the client. One sample per commit and client, on the pod that
 * delivered it:
 *
 * <ul>
 *   <li>{@code syncular.client.visibility} (Prometheus {@code syncular_client_visibility_seconds}, a histogram with
 *       a bucket boundary at {@code syncular.slo.visibility}) by {@code path}: {@code delta} or {@code pull};
 *   <li>{@code syncular.client.visibility.offline} ({@code syncular_client_visibility_offline_seconds}): the pulls of
 *       clients that were away — no stored record, or one older than {@code syncular.slo.offline-after} — kept
 *       apart: their lag is their absence, not staleness.
 * </ul>
 *
 * <p>Cost: a histogram record per commit and client (a few atomic additions, no allocation, no lock shared with
 * another thread's record); safe on the event loop.
 */
@Startup // meters exported from the start, at zero
@ApplicationScoped
public class VisibilityLag implements SyncObserver {
    static final String VISIBILITY = "syncular.client.visibility";
    static final String OFFLINE = "syncular.client.visibility.offline";

    private final Timer delta;
    private final Timer pull;
    private final Timer offline;
    private final long offlineAfterMs;

    @Inject
    public VisibilityLag(MeterRegistry registry, SloConfig slo) {
        this.offlineAfterMs = slo.offlineAfter().toMillis();
        this.delta = visibility(registry, slo.visibility(), "delta");
        this.pull = visibility(registry, slo.visibility(), "pull");
        this.offline = Timer.builder(OFFLINE)
                .description("From a commit's creation until a client that was away pulled it (not counted as stale)")
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofMillis(1))
                .maximumExpectedValue(Duration.ofDays(7))
                .register(registry);
    }

    private static Timer visibility(MeterRegistry registry, Duration slo, String path) {
        return Timer.builder(VISIBILITY)
                .description("From a commit's creation until a subscribed online client has it (delta or pull)")
                .tag("path", path)
                .publishPercentileHistogram()
                .serviceLevelObjectives(slo)
                .minimumExpectedValue(Duration.ofMillis(1))
                .maximumExpectedValue(Duration.ofHours(1))
                .register(registry);
    }

    /** A §8.2 delta of a commit created at {@code createdAtMs} was handed to a socket now. */
    public void delta(long createdAtMs) {
        delta.record(Math.max(0, System.currentTimeMillis() - createdAtMs), TimeUnit.MILLISECONDS);
    }

    @Override
    public void commitsVisible(String partition, long[] createdAtMs, int count, long lastContactMs) {
        long now = System.currentTimeMillis();
        Timer to = lastContactMs < 0 || now - lastContactMs > offlineAfterMs ? offline : pull;
        for (int i = 0; i < count; i++) {
            to.record(Math.max(0, now - createdAtMs[i]), TimeUnit.MILLISECONDS);
        }
    }
}
