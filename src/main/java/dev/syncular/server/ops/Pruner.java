package dev.syncular.server.ops;

import dev.syncular.server.storage.PartitionState;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.SyncStorage;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import org.jboss.logging.Logger;

/**
 * One pruning pass over every partition (§4.6): capture the log epoch, read the retention inputs, and
 * prune through the policy's bound (the storage deletes in bounded batches); then delete the push results
 * (§2.3) older than the policy's retention. An epoch that moved meanwhile refuses the prune; the next pass
 * recomputes.
 */
public final class Pruner {
    private static final Logger LOG = Logger.getLogger(Pruner.class);

    private final SyncStorage storage;
    private final RetentionPolicy policy;

    public Pruner(SyncStorage storage, RetentionPolicy policy) {
        this.storage = storage;
        this.policy = policy;
    }

    /** What one pass removed, over every partition. */
    public record Pass(long commits, long pushResults) {
        Pass plus(Pass o) {
            return new Pass(commits + o.commits, pushResults + o.pushResults);
        }
    }

    /** Prunes every partition. */
    public Uni<Pass> pruneAll(long nowMs) {
        return storage.listPartitions()
                .onItem().transformToMulti(list -> Multi.createFrom().iterable(list))
                .onItem().transformToUniAndConcatenate(p -> prune(p, nowMs)
                        .chain(commits -> storage.prunePushResults(p.partition(), policy.pushResultsCreatedBefore(nowMs))
                                .map(results -> new Pass(commits, results))))
                .collect().with(java.util.stream.Collectors.reducing(new Pass(0, 0), Pass::plus));
    }

    private Uni<Long> prune(PartitionState partition, long nowMs) {
        return storage.listClients(partition.partition()).flatMap(clients -> {
            long through = policy.pruneThrough(partition, clients, nowMs);
            if (through < 0) {
                return Uni.createFrom().item(0L);
            }
            return storage.prune(partition.partition(), partition.logEpoch(), through)
                    .map(r -> (long) r.removedCommits())
                    .onFailure(StorageException.class).recoverWithItem(e -> {
                        LOG.warnf("pruning skipped for one partition: %s", ((StorageException) e).code());
                        return 0L;
                    });
        });
    }
}
