/**
 * Authoritative server storage for SSP2, as the engine sees it: the {@link
 * dev.syncular.server.storage.SyncStorage} interface, the per-work {@link dev.syncular.server.storage.PushTx}
 * of a partition transaction, and the values they take and return (partition state, commits and changes,
 * rows and tombstones, push outcomes, client cursor records, checkpoints and the serve gate, blob references,
 * prune results) with {@link dev.syncular.server.storage.StorageException} and its {@code sync.storage.*}
 * codes, and {@link dev.syncular.server.storage.StorableText} — the text it can hold (no U+0000, bounded
 * index keys), which callers check before client input reaches it.
 *
 * <p>Storage stores and reads; it makes no protocol decision (conflict detection, authorization, retention
 * policy and result encoding are the engine's). It implements, as storage: §2.1 (the partition registry,
 * {@code logEpoch}, dense commit seqs), §2.2 (changes, rows, versions, tombstones), §2.3 (idempotency
 * records), §2.4 (storage layout, same-version readiness, the schema upgrade writer fence and backfill
 * checkpoints behind the serve gate), §3.1 (stored scopes and the scope-key indexes), §4.5 (commit windows,
 * client cursor records, and {@link dev.syncular.server.storage.RecentCommits}: the same windows from this process's own
 * newest commits when it holds them whole), §4.6 (the pruning horizon), §4.7 (bootstrap pages and the scope pin), §5.9.4 (the
 * blob reference index), §6.4 (per-partition serialized, atomic push transactions), §6.9 (durable reactions:
 * {@link dev.syncular.server.storage.PlannedReaction} rows appended by the push transaction, their delivery state
 * behind {@link dev.syncular.server.storage.ReactionStore}) and §7.3 (the auth lease
 * store, {@link dev.syncular.server.storage.AuthLeaseStore} with {@link dev.syncular.server.storage.AuthLease}).
 *
 * <p>Its users depend on the role they use, never on the implementation: {@link
 * dev.syncular.server.storage.SyncStorage} (the engine's partition log, rows, client records, gates), {@link
 * dev.syncular.server.storage.CheckpointStorage} (§2.4 backfill checkpoints and the stored schema version: backfills,
 * readiness), {@link dev.syncular.server.storage.RealtimeSignals} (the commit and control channels of the realtime
 * hubs, §8.2), {@link dev.syncular.server.storage.ExclusiveJobs} (one pod at a time for scheduled jobs), {@link
 * dev.syncular.server.storage.ReactionStorage} (§6.9 delivery), {@link dev.syncular.server.storage.AuthLeaseStorage}
 * (§7.3), {@link dev.syncular.server.storage.RowTables} (SQL names for the registered queries), {@link
 * dev.syncular.server.storage.ReadReplicas} (where a pull-only round reads: {@link
 * dev.syncular.server.storage.ReadRoute}, {@link dev.syncular.server.storage.PullReads}, told to a {@link
 * dev.syncular.server.storage.ReplicaObserver}; docs/SCALING.md "Reads from replicas"), {@link
 * dev.syncular.server.storage.ConsoleSessionStorage} (the operator console's sessions, {@link
 * dev.syncular.server.storage.ConsoleSession}: hashed ids every pod reads) and {@link
 * dev.syncular.server.storage.TenantLoadStorage} (each pod's loudest tenants, {@link
 * dev.syncular.server.storage.TenantLoadRow}, summed over the pods for the console); {@link
 * dev.syncular.server.storage.ServerStorage} is all of them at once, for the composition root and the conformance
 * host that assemble servers from it. {@link dev.syncular.server.storage.StorageBusy} is the storage's own word on
 * which failures are transient refusals ({@code sync.storage.busy}, answered 429 {@code sync.rate_limited}, §10.2
 * "host adapter errors"): the error mapping ({@code round.RoundFailure}) and the tenant figures ask it, not the
 * implementation. {@link dev.syncular.server.storage.QueryReads} runs the remote operations' snapshots and reads
 * the tables of notified commits (REMOTE.md §2, §6; {@link dev.syncular.server.storage.QuerySnapshot}), {@link
 * dev.syncular.server.storage.SignalListener} is a realtime hub's listening connection to the {@link
 * dev.syncular.server.storage.RealtimeSignals} channels (§8.2, §8.3, §8.6), and {@link
 * dev.syncular.server.storage.StorageBackup} the conformance host's §2.1 backup and restore.
 *
 * <p>May depend on {@code schema} (the compiled schema), {@code wire} (ops, commit statuses, row values) and
 * Mutiny; on nothing above it (no {@code sync}, {@code http}, {@code ops}). The PostgreSQL implementation
 * lives in {@code storage.postgres}.
 *
 * <p>Configuration (issue 46: each feature maps its own {@code syncular.*} group): {@code StorageConfig} ({@code syncular.storage.*}): the storage namespace, push lock and statement timeouts, the pool's waiters, read replicas, the recent-commit memory and the job lease, checked by the constraints on its methods.
 */
package dev.syncular.server.storage;
