package dev.syncular.server.jobs;

import dev.syncular.server.storage.RetentionInputs;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.SyncStorage;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import java.util.stream.Collectors;
import org.jboss.logging.Logger;

/**
 * One pruning pass over every partition (§4.6): page by page ({@value #PAGE} partitions, in id order), read each
 * partition's retention inputs (its log epoch and the lowest active cursor, aggregated by the storage), prune
 * through the policy's bound (the storage deletes in bounded batches), then delete the push results (§2.3) older
 * than the policy's retention. An epoch that moved meanwhile refuses the prune; the next pass recomputes.
 *
 * <p>Memory stays one page however many partitions and clients there are, and pages and partitions are iterated,
 * never chained recursively (a pass over 10,000 partitions completes in constant stack depth); {@value #PARALLEL}
 * partitions of a page are pruned at a time, each partition's prune on its own (its horizon, then its batches).
 */
public final class Pruner {
    private static final Logger LOG = Logger.getLogger(Pruner.class);
    static final int PAGE = 500;
    /**
     * Partitions pruned at once: each prune is a few short statements, so one at a time a pass waits on round trips
     * (10,000 partitions with a backlog each took minutes); four keep the database busy and leave the pool's other
     * connections to pushes and pulls.
     */
    static final int PARALLEL = 4;

    private final SyncStorage storage;
    private final RetentionPolicy policy;

    public Pruner(SyncStorage storage, RetentionPolicy policy) {
        this.storage = storage;
        this.policy = policy;
    }

    /**
     * What one pass removed over every partition, and the largest count of commits a partition kept above its
     * horizon afterwards.
     */
    public record Pass(long commits, long pushResults, long horizonLagCommits) {
        static final Pass NONE = new Pass(0, 0, 0);

        Pass plus(Pass o) {
            return new Pass(
                    commits + o.commits, pushResults + o.pushResults, Math.max(horizonLagCommits, o.horizonLagCommits));
        }
    }

    /** Prunes every partition. */
    public Uni<Pass> pruneAll(long nowMs) {
        long activeSince = policy.activeSince(nowMs);
        long resultsBefore = policy.pushResultsCreatedBefore(nowMs);
        // the id after which the next page starts; a short page is the last
        String[] after = {null};
        return Multi.createBy()
                .repeating()
                .uni(
                        () -> after,
                        a -> storage.retentionInputs(a[0], PAGE, activeSince).invoke(page -> {
                            if (!page.isEmpty()) {
                                a[0] = page.get(page.size() - 1).partition().partition();
                            }
                        }))
                .whilst(page -> page.size() == PAGE)
                .onItem()
                .transformToMultiAndConcatenate(page -> Multi.createFrom().iterable(page))
                .onItem()
                .transformToUni(inputs -> prune(inputs)
                        .chain(pass -> storage.prunePushResults(
                                        inputs.partition().partition(), resultsBefore)
                                .map(results -> new Pass(pass.commits(), results, pass.horizonLagCommits()))))
                .merge(PARALLEL)
                .collect()
                .with(Collectors.reducing(Pass.NONE, Pass::plus));
    }

    private Uni<Pass> prune(RetentionInputs inputs) {
        var partition = inputs.partition();
        long lag = partition.maxCommitSeq() - partition.horizonSeq();
        long through = policy.pruneThrough(inputs);
        if (through < 0) {
            return Uni.createFrom().item(new Pass(0, 0, lag));
        }
        return storage.prune(partition.partition(), partition.logEpoch(), through)
                .map(r -> new Pass(r.removedCommits(), 0, partition.maxCommitSeq() - r.horizonSeq()))
                .onFailure(StorageException.class)
                .recoverWithItem(e -> {
                    LOG.warnf("pruning skipped for one partition: %s", ((StorageException) e).code());
                    return new Pass(0, 0, lag);
                });
    }
}
