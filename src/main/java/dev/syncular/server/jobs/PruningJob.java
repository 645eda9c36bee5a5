package dev.syncular.server.jobs;

import dev.syncular.server.observability.OperationalEvents;
import dev.syncular.server.observability.PruningMetrics;
import dev.syncular.server.storage.SyncStorage;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import org.jboss.logging.Logger;

/**
 * Runs the §4.6 pruning pass (commit log and §2.3 push results) on {@code syncular.pruning.interval}, never two
 * at once: on one pod of the deployment per interval ({@link JobClaims}); {@link #pruneNow} is the same pass on
 * demand (the admin API). Each pass is told to {@link PruningMetrics} and, when it removed commits, to the
 * {@link OperationalEvents} tail.
 */
@ApplicationScoped
public class PruningJob {
    private static final Logger LOG = Logger.getLogger(PruningJob.class);

    private final Pruner pruner;
    private final JobClaims claims;
    private final boolean enabled;
    private final Duration interval;
    private final PruningMetrics metrics;
    private final OperationalEvents events;

    @Inject
    public PruningJob(
            SyncStorage storage,
            PruningConfig config,
            JobClaims claims,
            PruningMetrics metrics,
            OperationalEvents events) {
        PruningConfig p = config;
        this.pruner = new Pruner(
                storage, new RetentionPolicy(p.activeWindow(), p.keepNewestCommits(), p.pushResultRetention()));
        this.claims = claims;
        this.enabled = p.enabled();
        this.interval = p.interval();
        this.metrics = metrics;
        this.events = events;
    }

    @Scheduled(
            every = "${syncular.pruning.interval:1h}",
            delayed = "${syncular.pruning.interval:1h}",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP,
            skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    Uni<Void> run() {
        if (!enabled) {
            return Uni.createFrom().voidItem();
        }
        long started = System.nanoTime();
        return claims.run("pruning", interval, this::pruneNow)
                .invoke(pass -> {
                    if (pass != null && (pass.removedCommits() > 0 || pass.removedPushResults() > 0)) {
                        LOG.infof(
                                "pruning removed %d commits and %d push results in %d ms",
                                pass.removedCommits(),
                                pass.removedPushResults(),
                                (System.nanoTime() - started) / 1_000_000);
                    }
                })
                .onFailure()
                .invoke(e -> LOG.warn("pruning pass failed", e))
                .onFailure()
                .recoverWithNull()
                .replaceWithVoid();
    }

    /**
     * What a pass did: commits and push results removed, and the largest count of commits a partition keeps above
     * its horizon.
     */
    public record Pass(long removedCommits, long removedPushResults, long horizonLagCommits) {}

    /**
     * One pruning pass over every partition now, under the configured retention policy (whether or not the
     * schedule is enabled), with the largest horizon lag a partition kept.
     */
    public Uni<Pass> pruneNow() {
        return pruner.pruneAll(System.currentTimeMillis()).map(removed -> {
            long lag = removed.horizonLagCommits();
            metrics.passed(removed.commits(), lag);
            if (removed.commits() > 0) {
                events.pruned(removed.commits(), lag);
            }
            return new Pass(removed.commits(), removed.pushResults(), lag);
        });
    }
}
