package dev.syncular.server.storage;

import io.smallrye.mutiny.Uni;

/**
 * Every role of the server's storage at once, for what assembles a server from it (the composition root, the
 * conformance host's instances); every other user depends on the one role it uses. It also says which of its
 * failures are transient refusals ({@link StorageBusy}).
 */
public interface ServerStorage
        extends SyncStorage,
                RealtimeSignals,
                ExclusiveJobs,
                AuthLeaseStorage,
                ReactionStorage,
                RowTables,
                ConsoleSessionStorage,
                TenantLoadStorage,
                SchemaPlanReads,
                StorageBusy {

    /** The namespace (the PostgreSQL schema) holding every storage object. */
    String pgSchema();

    /**
     * Whether {@code namespace} (a PostgreSQL schema of the same database) holds a sync log (its partition table):
     * at start-up, the check that a default storage namespace does not start empty beside the tables an earlier
     * default left elsewhere.
     */
    Uni<Boolean> holdsSyncTables(String namespace);

    /** The commit log's layout and its online move to hash partitions. */
    LogRepartitioning logRepartitioning();
}
