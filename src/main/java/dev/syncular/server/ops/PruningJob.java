package dev.syncular.server.ops;

import dev.syncular.server.config.SyncularConfig;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.jboss.logging.Logger;

/** Runs the §4.6 pruning pass on {@code syncular.pruning.interval}, never two at once. */
@ApplicationScoped
public class PruningJob {
    private static final Logger LOG = Logger.getLogger(PruningJob.class);

    private final Pruner pruner;
    private final boolean enabled;

    @Inject
    public PruningJob(PostgresSyncStorage storage, SyncularConfig config) {
        SyncularConfig.Pruning p = config.pruning();
        this.pruner = new Pruner(storage, new RetentionPolicy(p.activeWindow(), p.keepNewestCommits()));
        this.enabled = p.enabled();
    }

    @Scheduled(every = "${syncular.pruning.interval:1h}", delayed = "${syncular.pruning.interval:1h}",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> run() {
        if (!enabled) {
            return Uni.createFrom().voidItem();
        }
        return pruner.pruneAll(System.currentTimeMillis())
                .invoke(removed -> {
                    if (removed > 0) {
                        LOG.infof("pruning removed %d commits", removed);
                    }
                })
                .onFailure().invoke(e -> LOG.warn("pruning pass failed", e))
                .onFailure().recoverWithNull()
                .replaceWithVoid();
    }
}
