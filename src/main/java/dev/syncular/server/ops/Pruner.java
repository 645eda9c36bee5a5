package dev.syncular.server.ops;

import dev.syncular.server.storage.PartitionState;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.SyncStorage;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import org.jboss.logging.Logger;

/**
 * One pruning pass over every partition (§4.6): capture the log epoch, read the retention inputs, and
 * prune through the policy's bound. An epoch that moved meanwhile refuses the prune; the next pass
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

    /** Prunes every partition; yields how many commits were removed in total. */
    public Uni<Long> pruneAll(long nowMs) {
        return storage.listPartitions()
                .onItem().transformToMulti(list -> Multi.createFrom().iterable(list))
                .onItem().transformToUniAndConcatenate(p -> prune(p, nowMs))
                .collect().with(java.util.stream.Collectors.summingLong(Long::longValue));
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
