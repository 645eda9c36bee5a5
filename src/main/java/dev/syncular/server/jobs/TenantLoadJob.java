package dev.syncular.server.jobs;

import dev.syncular.server.config.ScheduleInterval;
import dev.syncular.server.health.StorageReadiness;
import dev.syncular.server.observability.TenantLoad;
import dev.syncular.server.observability.TenantMetrics;
import dev.syncular.server.storage.TenantLoadRow;
import dev.syncular.server.storage.TenantLoadStorage;
import dev.syncular.server.sync.FairnessConfig;
import dev.syncular.server.sync.PushRate;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.function.ToLongFunction;
import org.jboss.logging.Logger;

/**
 * Every {@code syncular.tenants.publish-interval} on every pod (not a claimed job: each pod has its own figures), on a
 * worker thread: this pod's window of {@link TenantLoad} is summed once, its top N ({@code syncular.tenants.top-n})
 * refresh the gauges ({@link TenantMetrics}) and replace this pod's rows in the shared storage
 * ({@link TenantLoadStorage}), deleting on the way the rows of pods not heard from for {@value #STALE_INTERVALS}
 * intervals. {@link #board} is the merged view the console shows: the rows of the pods heard from within
 * {@value #LIVE_INTERVALS} intervals, summed per partition.
 */
@ApplicationScoped
public class TenantLoadJob {
    private static final Logger LOG = Logger.getLogger(TenantLoadJob.class);
    /** A pod's rows count in the merged view while written within this many intervals. */
    static final int LIVE_INTERVALS = 3;
    /** Rows of a pod not heard from for this many intervals are deleted by any pod's publication. */
    static final int STALE_INTERVALS = 10;
    /** The interval the merged view assumes when this pod publishes nothing ({@code off}). */
    private static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(10);

    /** What a merged row may be ordered by on the console. */
    public enum Figure {
        DATABASE("database", TenantLoadRow::databaseNanos),
        COMMITTED("committed", TenantLoadRow::committedBytes),
        FANOUT("fanout", TenantLoadRow::fanoutBytes),
        REFUSALS("refusals", TenantLoadRow::refusalCount);

        public final String param;
        public final ToLongFunction<TenantLoadRow> value;

        Figure(String param, ToLongFunction<TenantLoadRow> value) {
            this.param = param;
            this.value = value;
        }

        /** The figure a query parameter names, database time when none. */
        public static Figure of(String param) {
            for (Figure f : values()) {
                if (f.param.equals(param)) {
                    return f;
                }
            }
            return DATABASE;
        }
    }

    private final TenantLoad load;
    private final TenantMetrics metrics;
    private final TenantLoadStorage storage;
    private final int topN;
    private final Duration interval;
    private final String podId;
    private final StorageReadiness readiness;
    private final PushRate pushRate;
    private final boolean rateAcrossPods;

    @Inject
    public TenantLoadJob(
            TenantLoad load,
            TenantMetrics metrics,
            TenantLoadStorage storage,
            TenantsConfig config,
            FairnessConfig fairness,
            StorageReadiness readiness,
            PushRate pushRate) {
        this.readiness = readiness;
        this.pushRate = pushRate;
        this.rateAcrossPods = fairness.pushRateScope() == FairnessConfig.PushRateScope.DEPLOYMENT;
        this.load = load;
        this.metrics = metrics;
        this.storage = storage;
        this.topN = config.topN();
        Duration every = config.publishInterval();
        this.interval = ScheduleInterval.off(every) ? DEFAULT_INTERVAL : every;
        String host = System.getenv("HOSTNAME");
        // one id per process: a restarted pod's rows are new ones, its old ones age out
        this.podId = (host == null || host.isBlank() ? "pod" : host) + "/"
                + ProcessHandle.current().pid() + "/"
                + UUID.randomUUID().toString().substring(0, 8);
    }

    public int topN() {
        return topN;
    }

    /** This pod's id in the shared table. */
    public String podId() {
        return podId;
    }

    @Scheduled(
            every = "${syncular.tenants.publish-interval:10s}",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP,
            skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    void run() {
        if (!readiness.migrated()) {
            return; // the storage's tables (sync_tenant_load among them) are not there yet: the next interval
        }
        try {
            publish().await().atMost(interval.multipliedBy(2));
        } catch (RuntimeException e) {
            LOG.warn("publishing this pod's loudest tenants failed", e);
        }
    }

    /**
     * Sums the window once, refreshes the gauges and replaces this pod's rows; then, for push rates that hold across
     * the deployment ({@code syncular.fairness.push-rate-scope=deployment}), takes this pod's share of them: the rate
     * divided by the pods heard from within {@value #LIVE_INTERVALS} intervals ({@link PushRate#share}).
     */
    public Uni<Void> publish() {
        List<TenantLoadRow> window = load.window();
        metrics.refresh(window, topN);
        long now = System.currentTimeMillis();
        Uni<Void> published = storage.publishTenantLoad(
                podId, now, now - interval.toMillis() * STALE_INTERVALS, TenantLoad.top(window, topN));
        if (!rateAcrossPods) {
            return published;
        }
        return published
                .chain(() -> storage.countLivePods(now - interval.toMillis() * LIVE_INTERVALS))
                .invoke(pushRate::share)
                .replaceWithVoid();
    }

    /**
     * A pod that stops withdraws its rows (within a few seconds, or they age out): the other pods' shares of the push
     * rates grow at their next publication instead of after {@value #LIVE_INTERVALS} intervals.
     */
    void withdraw(@Observes ShutdownEvent event) {
        if (!readiness.migrated()) {
            return;
        }
        try {
            storage.withdrawTenantLoad(podId).await().atMost(Duration.ofSeconds(5));
        } catch (RuntimeException e) {
            LOG.debug("withdrawing this pod's tenant load failed; its rows age out", e);
        }
    }

    /**
     * The merged view: every partition of the pods heard from within {@value #LIVE_INTERVALS} intervals, its figures
     * summed over them, the top N by {@code by} (largest first; ties by partition id).
     */
    public Uni<List<TenantLoadRow>> board(Figure by) {
        long liveSince = System.currentTimeMillis() - interval.toMillis() * LIVE_INTERVALS;
        return storage.readTenantLoad(liveSince).map(rows -> TenantLoad.ranked(rows, by.value, topN));
    }
}
