package dev.syncular.server.boot;

import dev.syncular.server.jobs.PruningConfig;
import dev.syncular.server.storage.StorageConfig;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/**
 * The pod's storage bean: PostgreSQL sync storage on Quarkus's reactive {@link Pool}, in
 * {@code syncular.storage.pg-schema}, with {@code syncular.storage.*} and {@code syncular.pruning.*} batch sizes.
 * Its users inject the role they use ({@code SyncStorage}, {@code CheckpointStorage}, {@code RealtimeSignals},
 * {@code ExclusiveJobs}, {@code ReactionStorage}, {@code RowTables}, {@code AuthLeaseStorage},
 * {@code ConsoleSessionStorage}), never this class.
 */
@ApplicationScoped
public class StorageProducer {

    @Produces
    @Singleton
    PostgresSyncStorage storage(Pool pool, StorageConfig s, PruningConfig p) {
        return new PostgresSyncStorage(
                pool,
                s.pgSchema(),
                new PostgresSyncStorage.Settings(
                        s.maxQueuedPushesPerPartition(),
                        s.lockTimeout(),
                        s.statementTimeout(),
                        p.batchCommits(),
                        p.batchPushResults(),
                        s.recentCommits().asLongValue(),
                        s.jobLease(),
                        s.logPartitions()));
    }
}
