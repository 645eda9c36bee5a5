package dev.syncular.server.storage;

/**
 * Every role of the server's storage at once, for what assembles a server from it (the composition root, the
 * conformance host's instances); every other user depends on the one role it uses.
 */
public interface ServerStorage
        extends SyncStorage,
                RealtimeSignals,
                ExclusiveJobs,
                AuthLeaseStorage,
                ReactionStorage,
                RowTables,
                ConsoleSessionStorage {

    /** The namespace (the PostgreSQL schema) holding every storage object. */
    String pgSchema();
}
