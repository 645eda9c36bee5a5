/**
 * The PostgreSQL implementation of {@link dev.syncular.server.storage.SyncStorage} over the Vert.x reactive
 * SQL client: {@link dev.syncular.server.storage.postgres.PostgresSyncStorage}, a thin facade over one class
 * per concern, each holding the SQL it runs (statement texts built once per instance):
 *
 * <ul>
 *   <li>{@code StorageSchemaMigration} (the schema version marker, the start-up and schema-upgrade writer fence
 *       transactions), {@code StartupDdl} (how catalog-checked {@link dev.syncular.server.storage.postgres.DdlStep}s
 *       run, the DDL transaction and its lock-timeout retry), {@code CoreTables} (the DDL plan of the storage's
 *       own tables), {@code RowTableDdl} (the DDL plan of the synced tables: creation and additive migration),
 *       {@code SameVersionReadiness} (the §2.4 readiness checks: stored and physical layout), {@code TableLayout},
 *       {@code InstalledSchema};
 *   <li>{@code PartitionRegistry} — §2.1 partitions, log epochs and their rotation, the partition lock row;
 *   <li>{@code ServeGateReads}, {@code CheckpointStore} — §2.4 serve gate, request entry and exit reads, the §8.1
 *       socket upgrade's read, backfill checkpoints and the writer fence;
 *   <li>{@code PushQueue}, {@code PushTransaction}, {@code PushContext}, {@code HeldAppend}, {@code CommitAppend},
 *       {@code PushReadAhead}, {@code PushResults} — §6.4 per-partition queue and grouped transactions (the
 *       statements and stores they share, the append held for its idempotency record), the commit append to the
 *       log with its scope keys and §8.2 notification (§2.1, §2.2), the group read-ahead of
 *       {@link dev.syncular.server.storage.PushReadHint}, §2.3 idempotency records;
 *   <li>{@code LogLayout}, {@code LogRepartition} — the commit log's tables (§2.1, §2.2, the §4.5 scope-key index),
 *       plain or hash-partitioned by partition id, and the online move of a plain log to hash partitions
 *       (docs/SCALING.md, "Partitioning the commit log");
 *   <li>{@code CommitLogReads} — §4.5 commit windows and the §4.7 scope pin ({@code ReplicaPullReads}: the same
 *       pull reads on a hot standby);
 *   <li>{@code SnapshotReads} — §4.7 bootstrap pages (and §5.2 rows-segment pages);
 *   <li>{@code ProjectionRows}, {@code RowTable}, {@code StoredScopes} — the row projection, its per-table
 *       statements and codec (§2.2, §2.4), stored scopes (§3.1);
 *   <li>{@code UniqueIndexes} — the declared unique indexes of the row tables (unique within a partition), their
 *       concurrent start-up build and the refusal of rows that already collide, and a push write they refuse as
 *       {@code sync.storage.unique_violation} (§10.2 {@code sync.constraint_violation});
 *   <li>{@code BlobReferenceIndex} — §5.9.4 reference index and §5.9.2/§5.9.6 sweep marks;
 *   <li>{@code ClientTable} — §4.5 client cursor records (the §4.6 retention input) and the §8.2 ack update,
 *       written in batches on one connection at a time ({@code CursorAcks});
 *   <li>{@code SignalChannels} — the §8.2 commit, control and presence channels of a storage schema and the
 *       cluster's NOTIFY queue usage;
 *   <li>{@code Pruning} — §4.6 pruning horizon and batched deletion, §2.3 push-result pruning;
 *   <li>{@code JobLocks} — the database claim of scheduled jobs shared by several pods;
 *   <li>{@link dev.syncular.server.storage.postgres.PostgresReadReplicas}, {@code StandbyReplica} — read replicas:
 *       the freshness rule that lets a hot standby serve a pull-only round or a remote query, its replay-lag
 *       checks and rotation (docs/SCALING.md, "Reads from replicas");
 *   <li>{@link dev.syncular.server.storage.postgres.BoundedPgPool}, {@code ReadWriteTarget} — the application's
 *       connection pool (a bounded wait for a connection, the session {@code statement_timeout}) and the write
 *       endpoint of a failover host list (libpq's {@code target_session_attrs=read-write});
 *   <li>{@link dev.syncular.server.storage.postgres.PostgresSignalListener} — a realtime hub's {@code LISTEN}
 *       connection (§8.2, §8.3, §8.6) on the host that accepts writes, its reconnects and backoff;
 *       {@link dev.syncular.server.storage.postgres.SchemaBackup} — a schema's §2.1 backup and restore (the
 *       conformance host's {@code backup-restore});
 *   <li>{@link dev.syncular.server.storage.postgres.PostgresQueryReads} — the remote operations' reads (REMOTE.md
 *       §2 snapshots of a registered query, on the primary or a fresh replica; §6 the tables of notified commits);
 *   <li>{@code PgSql} — identifier quoting, literals, the pipelined-statement join, the READ COMMITTED
 *       transaction and the transient-failure classification.
 * </ul>
 *
 * <h2>Several pods on one database</h2>
 *
 * Nothing another process needs lives in memory: partitions are serialized by their row lock, not by the
 * in-process queue (which only groups this process's pushes), and every once-per-deployment job takes a
 * database claim ({@code JobLocks}).
 *
 * <p><b>Lock order.</b> Every transaction that takes more than one of these takes them in this order, so no two
 * can wait for each other: (1) the partition — its {@code sync_partitions} row ({@code SELECT ... FOR UPDATE},
 * several in {@code partition_id} order), or the whole table for a schema upgrade ({@code LOCK TABLE ... IN
 * EXCLUSIVE MODE}, which conflicts with every row lock); (2) backfill checkpoint rows
 * ({@code sync_backfill_checkpoints}); (3) writer-fence rows ({@code sync_writer_fence}). Push transactions
 * take (1), then write the log, rows, results and sweep marks, and may advance a checkpoint (2); the fence
 * trigger only reads (3). A declare ({@code CheckpointStore.installCheckpoints}, also used by the upgrade)
 * locks the declared partitions, writes the checkpoints, then raises their fences; the upgrade raises every
 * fence last. Activation locks the partition, then the checkpoint. Pruning's horizon transaction takes (1)
 * only; its deletion batches and the blob sweep's deletes and settlements take none of them.
 *
 * <p><b>Isolation.</b> Every explicit transaction states {@code READ COMMITTED} first ({@code PgSql.readCommitted};
 * the push group begins with {@code BEGIN ISOLATION LEVEL READ COMMITTED}), and every connection of the server's pool defaults to it
 * ({@code default_transaction_isolation}, a connection parameter), so single statements outside a transaction
 * run at it as well. It is what the transactions rely on: a statement issued after a lock is granted sees what
 * the previous holder committed (the push group's serve-gate read and read-ahead after the partition lock, the
 * upgrade's marker re-read after the table lock, activation's change scan after the partition lock). Under
 * REPEATABLE READ the first of those would fail with a serialization error instead.
 *
 * <p><b>Timeouts.</b> A push group sets {@code lock_timeout} and {@code statement_timeout} ({@code SET LOCAL},
 * {@code syncular.storage.*}); every other statement of the application's pool (pulls, bootstraps) runs under
 * the same {@code statement_timeout} as its connection's session default ({@link dev.syncular.server.storage.postgres.BoundedPgPool}).
 * Start-up DDL and the schema upgrade lift the statement timeout and run under {@code lock_timeout}
 * {@value dev.syncular.server.storage.postgres.StartupDdl#DDL_LOCK_TIMEOUT_MS} ms and are retried,
 * so a DDL lock request never stalls the pushes queued behind it for longer. Timeouts, deadlocks, a full push
 * queue and a refused pool wait reach callers as {@code sync.storage.busy} ({@link
 * dev.syncular.server.storage.postgres.PostgresStores#busy}), everything rolled back.
 *
 * <p>§8.2: {@code PushTransaction}'s commit append also issues {@code pg_notify} on the storage schema's commit
 * channel ({@link dev.syncular.server.storage.postgres.PostgresSyncStorage#notificationChannel}), inside the
 * same statement; {@code CommitLogReads} reads a notified commit whole. The §2.1 log-epoch rotation notifies
 * {@code <partition>:epoch} on the same channel in its transaction, so every pod's hub fences that partition's
 * sockets ({@link dev.syncular.server.storage.RealtimeSignals#EPOCH_NOTIFICATION}). An operator's
 * disconnect of an actor's or a client's sockets ({@link dev.syncular.server.storage.SocketDisconnect})
 * travels on the schema's control channel ({@link dev.syncular.server.storage.postgres.PostgresSyncStorage#controlChannel}).
 *
 * <p>§7.3: {@link dev.syncular.server.storage.postgres.PostgresAuthLeaseStore} keeps auth leases in
 * {@code sync_auth_leases}, each record sealed with an HMAC under the server's lease key and bound to the §2.1
 * log epoch it was issued in (a restore's epoch rotation retires every earlier lease).
 *
 * <p>Operator console sessions: {@link dev.syncular.server.storage.postgres.ConsoleSessions} keeps them in
 * {@code sync_console_sessions} under the SHA-256 of the session id (never the id), with the principal, the CSRF
 * token and the expiry; an expired row is never read and the next sign-in deletes it.
 *
 * <p>The loudest tenants: {@link dev.syncular.server.storage.postgres.TenantLoadTable} keeps each pod's top
 * partitions of the last minute in {@code sync_tenant_load} (a pod replaces its own rows in one transaction and
 * deletes those of pods gone quiet); a reader sums the recent rows per partition in one statement.
 *
 * <p>Public are what the composition root ({@code boot}) builds — the facade, the read replicas, the pool, the
 * remote operations' reads, the listening connection, the schema backup — and the static helpers other PostgreSQL
 * stores of the same schema use ({@code q}, {@code applyDdl} with its {@code DdlStep}s, {@code readCommitted},
 * {@code busy}, {@code rowTableName}). It ranks just below {@code boot}: only {@code boot} and the other PostgreSQL
 * implementations ({@code segments.postgres}, {@code blobs.postgres}) name its classes. May depend on {@code storage},
 * {@code schema}, {@code wire}, {@code config}, {@code errors}, the Vert.x SQL client (Mutiny bindings,
 * {@code pgclient} for SQLSTATEs), Mutiny and Jackson; never on the engine or the HTTP layer. No reflection, no
 * runtime class loading (native image).
 */
package dev.syncular.server.storage.postgres;
