package dev.syncular.server.ops;

import dev.syncular.server.config.SyncularConfig;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.jboss.logging.Logger;

/**
 * Runs the §4.6 pruning pass (commit log and push results) on {@code syncular.pruning.interval}, never two at
 * once: on one pod of the deployment per interval ({@link JobClaims}).
 */
@ApplicationScoped
public class PruningJob {
    private static final Logger LOG = Logger.getLogger(PruningJob.class);

    private final Pruner pruner;
    private final JobClaims claims;
    private final boolean enabled;
    private final String interval;

    @Inject
    public PruningJob(PostgresSyncStorage storage, SyncularConfig config, JobClaims claims) {
        SyncularConfig.Pruning p = config.pruning();
        this.pruner = new Pruner(storage, new RetentionPolicy(p.activeWindow(), p.keepNewestCommits(), p.pushResultRetention()));
        this.claims = claims;
        this.enabled = p.enabled();
        this.interval = p.interval();
    }

    @Scheduled(every = "${syncular.pruning.interval:1h}", delayed = "${syncular.pruning.interval:1h}",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> run() {
        if (!enabled) {
            return Uni.createFrom().voidItem();
        }
        return claims.run("pruning", interval, () -> pruner.pruneAll(System.currentTimeMillis()))
                .invoke(pass -> {
                    if (pass != null && (pass.commits() > 0 || pass.pushResults() > 0)) {
                        LOG.infof("pruning removed %d commits and %d push results", pass.commits(), pass.pushResults());
                    }
                })
                .onFailure().invoke(e -> LOG.warn("pruning pass failed", e))
                .onFailure().recoverWithNull()
                .replaceWithVoid();
    }
}
