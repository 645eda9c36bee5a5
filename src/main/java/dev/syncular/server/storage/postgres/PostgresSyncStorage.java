package dev.syncular.server.storage.postgres;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.storage.ActivationResult;
import dev.syncular.server.storage.AuthLeaseStore;
import dev.syncular.server.storage.BlobReference;
import dev.syncular.server.storage.CheckpointDeclaration;
import dev.syncular.server.storage.ClientRecord;
import dev.syncular.server.storage.CommitQuery;
import dev.syncular.server.storage.CommitWindow;
import dev.syncular.server.storage.ConsoleSession;
import dev.syncular.server.storage.GateCheck;
import dev.syncular.server.storage.LogRepartitioning;
import dev.syncular.server.storage.PartitionState;
import dev.syncular.server.storage.PruneResult;
import dev.syncular.server.storage.PullReads;
import dev.syncular.server.storage.PushOutcome;
import dev.syncular.server.storage.PushReadHint;
import dev.syncular.server.storage.PushTx;
import dev.syncular.server.storage.RecentCommits;
import dev.syncular.server.storage.RequestEntry;
import dev.syncular.server.storage.RetentionInputs;
import dev.syncular.server.storage.ServeGate;
import dev.syncular.server.storage.ServerStorage;
import dev.syncular.server.storage.SnapshotRows;
import dev.syncular.server.storage.SocketDisconnect;
import dev.syncular.server.storage.SocketEntry;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.StoragePlan;
import dev.syncular.server.storage.StoredCheckpoint;
import dev.syncular.server.storage.StoredCommit;
import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.storage.TenantLoadRow;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * {@link SyncStorage} over the Vert.x reactive PostgreSQL client. All objects live in one PostgreSQL
 * schema (namespace) given at construction, so instances and tests isolate by schema; every identifier
 * is quoted and qualified. Non-blocking throughout; nothing is cached but the compiled schema.
 *
 * <p>A facade: each concern lives in its own class of this package, with its SQL —
 * {@link StorageSchemaMigration} (DDL, migration, §2.4 readiness: with {@link StartupDdl}, {@link CoreTables},
 * {@link RowTableDdl}, {@link SameVersionReadiness}), {@link PartitionRegistry} (§2.1),
 * {@link ServeGateReads} and {@link CheckpointStore} (§2.4 serve gate, checkpoints, writer fence),
 * {@link PushQueue}, {@link PushTransaction}, {@link PushReadAhead} and {@link PushResults} (§6.4, §2.3),
 * {@link CommitLogReads} (§4.5), {@link SnapshotReads} (§4.7), {@link ProjectionRows},
 * {@link BlobReferenceIndex} (§5.9.4), {@link ClientTable} (§4.5), {@link Pruning} (§4.6),
 * {@link JobLocks} (scheduled jobs on several pods), {@link ConsoleSessions} (operator console sign-ins) and
 * {@link SignalChannels} (the §8.2 commit, control and presence channels).
 */
public final class PostgresSyncStorage implements ServerStorage {
    /**
     * Operating limits ({@link #DEFAULTS}; the server takes them from {@code syncular.storage.*} and
     * {@code syncular.pruning.*}).
     *
     * @param maxQueuedPerPartition partition transactions that may wait in one partition's in-process queue; one
     *                              more is refused with {@code sync.storage.busy} ({@code queue_full})
     * @param lockTimeout           {@code lock_timeout} of every partition transaction (zero: none)
     * @param statementTimeout      {@code statement_timeout} of every partition transaction (zero: none)
     * @param pruneBatchCommits     commit sequences deleted per pruning transaction
     * @param pruneBatchResults     push results deleted per pruning statement
     * @param recentCommitBytes     the estimated bytes of this process's newest commits kept for the pulls that
     *                              follow them ({@link RecentCommits}); {@code 0}: every window read from the log
     * @param jobLease              how long a scheduled job's claim holds ({@link JobLocks})
     * @param logPartitions         the hash partitions of each commit-log table a new database gets
     *                              ({@link LogLayout}; {@code 0}: plain tables)
     */
    public record Settings(
            int maxQueuedPerPartition,
            Duration lockTimeout,
            Duration statementTimeout,
            int pruneBatchCommits,
            int pruneBatchResults,
            long recentCommitBytes,
            Duration jobLease,
            int logPartitions) {
        public static final Settings DEFAULTS = new Settings(
                1000, Duration.ofSeconds(10), Duration.ofSeconds(30), 2000, 1000, 8L << 20, Duration.ofSeconds(60), 0);

        public Settings {
            if (maxQueuedPerPartition < 1 || pruneBatchCommits < 1 || pruneBatchResults < 1) {
                throw new IllegalArgumentException("queue and batch sizes must be at least 1");
            }
            if (recentCommitBytes < 0 || jobLease.toMillis() < 3) {
                throw new IllegalArgumentException("recentCommitBytes must be >= 0 and jobLease at least 3 ms");
            }
            LogLayout.checkedLeaves(logPartitions);
        }
    }

    private final Pool pool;
    private final String pgSchema;
    private final InstalledSchema installed;
    private final StorageSchemaMigration migration;
    private final SchemaPlanning planning;
    private final PartitionRegistry registry;
    private final ServeGateReads gates;
    private final CheckpointStore checkpoints;
    private final PushQueue pushes;
    private final PushResults results;
    private final CommitLogReads commits;
    private final SnapshotReads snapshots;
    private final ProjectionRows rows;
    private final BlobReferenceIndex blobs;
    private final ClientTable clients;
    private final SignalChannels signals;
    private final Pruning pruning;
    private final JobLocks jobs;
    private final PostgresReactionStore reactions;
    private final ConsoleSessions consoleSessions;
    private final TenantLoadTable tenantLoad;
    private final RecentCommits recent;

    /**
     * @param pool     the reactive pool
     * @param pgSchema the PostgreSQL schema (namespace) holding every storage object; created if absent
     * @param settings the push queue, timeouts and pruning batches ({@link Settings#DEFAULTS})
     */
    public PostgresSyncStorage(Pool pool, String pgSchema, Settings settings) {
        this.pool = Objects.requireNonNull(pool, "pool");
        this.pgSchema = Objects.requireNonNull(pgSchema, "pgSchema");
        installed = new InstalledSchema(pgSchema);
        registry = new PartitionRegistry(pool, pgSchema);
        gates = new ServeGateReads(pool, pgSchema, registry);
        checkpoints = new CheckpointStore(pool, pgSchema, registry);
        migration = new StorageSchemaMigration(pool, pgSchema, installed, checkpoints, settings.logPartitions());
        planning = new SchemaPlanning(pool, pgSchema);
        results = new PushResults(pool, pgSchema);
        commits = new CommitLogReads(pool, pgSchema, installed);
        snapshots = new SnapshotReads(pool, pgSchema, installed);
        rows = new ProjectionRows(pool, installed);
        blobs = new BlobReferenceIndex(pool, pgSchema);
        clients = new ClientTable(pool, pgSchema);
        signals = new SignalChannels(pool, pgSchema);
        pruning = new Pruning(pool, pgSchema, registry, settings.pruneBatchCommits(), settings.pruneBatchResults());
        jobs = new JobLocks(pool, pgSchema, settings.jobLease());
        reactions = new PostgresReactionStore(pool, pgSchema);
        consoleSessions = new ConsoleSessions(pool, pgSchema);
        tenantLoad = new TenantLoadTable(pool, pgSchema);
        recent =
                settings.recentCommitBytes() == 0 ? RecentCommits.OFF : new RecentCommits(settings.recentCommitBytes());
        pushes = new PushQueue(
                pool,
                registry,
                new PushContext(pgSchema, installed, gates, checkpoints, rows, results, blobs, recent),
                settings.maxQueuedPerPartition(),
                settings.lockTimeout().toMillis(),
                settings.statementTimeout().toMillis());
    }

    /** {@link PostgresStores#busy}: the transient failures of this storage and of the stores sharing its database. */
    @Override
    public StorageException busy(Throwable failure) {
        return PgSql.busy(failure);
    }

    @Override
    public String pgSchema() {
        return pgSchema;
    }

    @Override
    public Uni<Boolean> holdsSyncTables(String namespace) {
        return migration.holdsSyncTables(namespace);
    }

    @Override
    public LogRepartitioning logRepartitioning() {
        return new LogRepartition(pool, pgSchema);
    }

    @Override
    public RecentCommits recentCommits() {
        return recent;
    }

    /** The §6.9 reaction rows' delivery side. */
    @Override
    public PostgresReactionStore reactions() {
        return reactions;
    }

    /** The qualified, quoted name of a storage object. */
    @Override
    public String qualified(String name) {
        return PgSql.qualified(pgSchema, name);
    }

    @Override
    public String qualifiedRowTable(String table) {
        return qualified(rowTableName(table));
    }

    /** The physical projection table of a synced table (unqualified). */
    public static String rowTableName(String table) {
        return RowTable.physicalName(table);
    }

    /**
     * Runs a scheduled job's {@code work} on one pod at a time and at most once per {@code minIntervalMs} across
     * every process sharing this storage schema ({@link JobLocks}); yields its item, or {@code null} when
     * skipped (another pod runs it now, or ran it within the interval). {@code work} yields a non-null item.
     *
     * @param runner the pod's name, recorded in {@code sync_jobs}
     */
    @Override
    public <T> Uni<T> runExclusively(String job, long minIntervalMs, long nowMs, String runner, Supplier<Uni<T>> work) {
        return jobs.runExclusively(job, minIntervalMs, nowMs, runner, work);
    }

    /**
     * This storage's pull reads ({@link CommitLogReads}, {@link SnapshotReads}) on {@code replica}, a hot standby of
     * its database: the same schema and statements, the schema this storage installed (read replicas,
     * {@link PostgresReadReplicas}).
     */
    PullReads readsOn(Pool replica) {
        return new ReplicaPullReads(
                new CommitLogReads(replica, pgSchema, installed), new SnapshotReads(replica, pgSchema, installed));
    }

    /** The statement of one commit-window batch, {@code $1}–{@code $6} as {@code CommitLogReads} binds them (plan tests). */
    String commitWindowStatement() {
        return commits.commitWindow;
    }

    /**
     * The snapshot page statement of {@code table} after a cursor, one scope variable ({@code $1}–{@code $6} as
     * {@link SnapshotReads} binds them), once a page of it was read (plan tests).
     */
    String snapshotPageStatement(String table) {
        return installed.table(table).pageSql("snapshot:0>", k -> {
            throw new IllegalStateException("no snapshot page of " + table + " read after a cursor yet");
        });
    }

    /** How many {@link PushTx#findPushResult} / {@link PushTx#readRows} calls a read-ahead answered so far (tests). */
    long readAheadAnswers() {
        return pushes.readAheadAnswers();
    }

    /** How many groups ran again, each work's writes awaited, after their pipelined attempt failed (tests). */
    long pipelinedReruns() {
        return pushes.pipelinedReruns();
    }

    // ---- schema (§2.4) --------------------------------------------------------------------------------

    @Override
    public Uni<Void> ensureSchema(CompiledSchema running) {
        return migration.ensureSchema(running);
    }

    @Override
    public Uni<Void> ensureSchema(CompiledSchema running, List<CheckpointDeclaration> declarations) {
        return migration.ensureSchema(running, declarations);
    }

    @Override
    public Uni<StoragePlan> planSchema(CompiledSchema next, long clientsSinceMs) {
        return planning.plan(next, clientsSinceMs);
    }

    @Override
    public Uni<Integer> readStoredSchemaVersion() {
        return migration.readStoredSchemaVersion();
    }

    // ---- serve gate, request entry and exit (§2.4) ----------------------------------------------------

    @Override
    public Uni<ServeGate> readServeGate(String partition, int runningSchemaVersion) {
        return gates.readServeGate(partition, runningSchemaVersion);
    }

    @Override
    public Uni<GateCheck> readGateCheck(String partition, int runningSchemaVersion) {
        return gates.readGateCheck(partition, runningSchemaVersion);
    }

    @Override
    public Uni<RequestEntry> enterRequest(String partition, String clientId, int runningSchemaVersion, long nowMs) {
        return gates.enterRequest(partition, clientId, runningSchemaVersion, nowMs);
    }

    @Override
    public Uni<GateCheck> finishRequest(String partition, int runningSchemaVersion, ClientRecord client) {
        return gates.finishRequest(partition, runningSchemaVersion, client);
    }

    // ---- backfill checkpoints (§2.4) ------------------------------------------------------------------

    @Override
    public Uni<List<StoredCheckpoint>> readPendingCheckpoints(int runningSchemaVersion) {
        return checkpoints.readPendingCheckpoints(runningSchemaVersion);
    }

    @Override
    public Uni<List<StoredCheckpoint>> readCheckpoints(String partition) {
        return checkpoints.readCheckpoints(partition);
    }

    @Override
    public Uni<StoredCheckpoint> declareCheckpoint(String partition, String name, int schemaVersion, long nowMs) {
        return checkpoints.declareCheckpoint(partition, name, schemaVersion, nowMs);
    }

    @Override
    public Uni<StoredCheckpoint> abandonCheckpoint(String partition, String name, int schemaVersion) {
        return checkpoints.abandonCheckpoint(partition, name, schemaVersion);
    }

    @Override
    public Uni<StoredCheckpoint> claimCheckpoint(String partition, String name, int schemaVersion, long nowMs) {
        return checkpoints.claimCheckpoint(partition, name, schemaVersion, nowMs);
    }

    @Override
    public Uni<Boolean> advanceCheckpoint(
            String partition, String name, long ownerEpoch, long watermark, long observedRows, long nowMs) {
        return checkpoints.advanceCheckpoint(partition, name, ownerEpoch, watermark, observedRows, nowMs);
    }

    @Override
    public Uni<ActivationResult> activateCheckpoint(
            String partition, String name, long ownerEpoch, long watermark, List<String> sourceTables, long nowMs) {
        return checkpoints.activateCheckpoint(partition, name, ownerEpoch, watermark, sourceTables, nowMs);
    }

    // ---- partition registry (§2.1) --------------------------------------------------------------------

    @Override
    public Uni<PartitionState> touchPartition(String partition, long nowMs) {
        return registry.touchPartition(partition, nowMs);
    }

    @Override
    public Uni<PartitionState> readPartition(String partition) {
        return registry.readPartition(partition);
    }

    @Override
    public Uni<SocketEntry> readSocketEntry(String partition, String clientId) {
        return gates.readSocketEntry(partition, clientId);
    }

    @Override
    public Uni<List<PartitionState>> listPartitions() {
        return registry.listPartitions();
    }

    @Override
    public Uni<List<PartitionState>> listPartitions(String afterPartition, int limit) {
        return registry.listPartitions(afterPartition, limit);
    }

    /** The §7.3 auth lease store on this storage's schema, sealing records under {@code key}. */
    @Override
    public AuthLeaseStore authLeases(byte[] key) {
        return new PostgresAuthLeaseStore(pool, pgSchema, key);
    }

    // ---- operator console sessions ----------------------------------------------------------------------

    @Override
    public Uni<Void> createConsoleSession(ConsoleSession session, long nowMs) {
        return consoleSessions.create(session, nowMs);
    }

    @Override
    public Uni<ConsoleSession> readConsoleSession(byte[] idHash, long nowMs) {
        return consoleSessions.read(idHash, nowMs);
    }

    @Override
    public Uni<Boolean> deleteConsoleSession(byte[] idHash) {
        return consoleSessions.delete(idHash);
    }

    // ---- the loudest tenants of every pod ----------------------------------------------------------------

    @Override
    public Uni<Void> publishTenantLoad(String podId, long nowMs, long staleBeforeMs, List<TenantLoadRow> rows) {
        return tenantLoad.publish(podId, nowMs, staleBeforeMs, rows);
    }

    @Override
    public Uni<List<TenantLoadRow>> readTenantLoad(long liveSinceMs) {
        return tenantLoad.read(liveSinceMs);
    }

    @Override
    public Uni<Integer> countLivePods(long liveSinceMs) {
        return tenantLoad.countLivePods(liveSinceMs);
    }

    @Override
    public Uni<Void> withdrawTenantLoad(String podId) {
        return tenantLoad.withdraw(podId);
    }

    @Override
    public Uni<PartitionState> rotateLogEpoch(String partition) {
        return registry.rotateLogEpoch(partition);
    }

    // ---- push (§2.3, §6.4) ----------------------------------------------------------------------------

    @Override
    public <T> Uni<T> inPartitionTransaction(String partition, Function<PushTx, Uni<T>> work) {
        return pushes.inPartitionTransaction(partition, null, work);
    }

    @Override
    public <T> Uni<T> inPartitionTransaction(String partition, PushReadHint hint, Function<PushTx, Uni<T>> work) {
        return pushes.inPartitionTransaction(partition, hint, work);
    }

    @Override
    public Uni<PushOutcome> findPushResult(String partition, String clientId, String clientCommitId) {
        return results.findPushResult(partition, clientId, clientCommitId);
    }

    // ---- pull (§4.5, §4.7) ----------------------------------------------------------------------------

    @Override
    public Uni<CommitWindow> readCommits(String partition, CommitQuery query) {
        return commits.readCommits(partition, query);
    }

    @Override
    public Uni<Long> readScopePin(String partition, String table, String variable, Set<String> values, long upToSeq) {
        return commits.readScopePin(partition, table, variable, values, upToSeq);
    }

    @Override
    public Uni<List<StoredRow>> readRowsPage(
            String partition, String table, Map<String, Set<String>> scopes, String afterRowId, int limit) {
        return snapshots.readRowsPage(partition, table, scopes, afterRowId, limit);
    }

    @Override
    public Uni<SnapshotRows> readSnapshotPage(
            String partition,
            String table,
            Map<String, Set<String>> scopes,
            String afterRowId,
            int limit,
            long maxBytes) {
        return snapshots.readSnapshotPage(partition, table, scopes, afterRowId, limit, maxBytes);
    }

    @Override
    public Uni<Map<String, StoredRow>> readRows(String partition, String table, List<String> rowIds) {
        return rows.readRows(partition, table, rowIds);
    }

    @Override
    public Uni<List<StoredRow>> readAllRows(String partition, String table) {
        return rows.readAllRows(partition, table);
    }

    @Override
    public Uni<Map<String, Long>> countRows(String partition) {
        return rows.countRows(partition);
    }

    // ---- client cursor records (§4.5) -----------------------------------------------------------------

    @Override
    public Uni<Void> upsertClient(ClientRecord record) {
        return clients.upsertClient(record);
    }

    @Override
    public Uni<ClientRecord> readClient(String partition, String clientId) {
        return clients.readClient(partition, clientId);
    }

    @Override
    public Uni<Boolean> advanceClientCursor(
            String partition, String clientId, String actorId, String logEpoch, long cursor, long nowMs) {
        return clients.advanceCursor(partition, clientId, actorId, logEpoch, cursor, nowMs);
    }

    @Override
    public Uni<StoredCommit> readCommit(String partition, long commitSeq) {
        return commits.readCommit(partition, commitSeq);
    }

    @Override
    public String notificationChannel() {
        return signals.notificationChannel();
    }

    @Override
    public Uni<Double> notificationQueueUsage() {
        return signals.notificationQueueUsage();
    }

    @Override
    public String controlChannel() {
        return signals.controlChannel();
    }

    @Override
    public Uni<Void> announce(SocketDisconnect disconnect) {
        return signals.announce(disconnect);
    }

    @Override
    public String presenceChannel() {
        return signals.presenceChannel();
    }

    @Override
    public Uni<Void> publishPresence(List<String> chunks) {
        return signals.publishPresence(chunks);
    }

    @Override
    public Uni<List<ClientRecord>> listClients(String partition) {
        return clients.listClients(partition);
    }

    // ---- blob reference index (§5.9.4) ----------------------------------------------------------------

    @Override
    public Uni<List<BlobReference>> readBlobReferences(
            String partition, String blobId, BlobReference after, int limit) {
        return blobs.readBlobReferences(partition, blobId, after, limit);
    }

    @Override
    public Uni<Set<String>> readReferencedBlobIds(String partition, Collection<String> blobIds) {
        return blobs.readReferencedBlobIds(partition, blobIds);
    }

    @Override
    public Uni<Void> recordBlobUpload(String partition, String blobId, String actorId, long nowMs) {
        return blobs.recordUpload(partition, blobId, actorId, nowMs);
    }

    @Override
    public Uni<Set<String>> readBlobsUploadedBy(String partition, String actorId, Collection<String> blobIds) {
        return blobs.uploadedBy(partition, actorId, blobIds);
    }

    @Override
    public Uni<Long> readBlobSweepMark(String partition) {
        return blobs.readBlobSweepMark(partition);
    }

    @Override
    public Uni<Void> settleBlobSweep(String partition, long sweepMark, Collection<String> blobIds) {
        return blobs.settleSweeps(partition, sweepMark, blobIds);
    }

    @Override
    public Uni<Long> forgetBlobSweeps(long sweptBeforeMs) {
        return blobs.forgetSweeps(sweptBeforeMs);
    }

    // ---- pruning (§4.6) -------------------------------------------------------------------------------

    @Override
    public Uni<PruneResult> prune(String partition, String expectedLogEpoch, long throughSeq) {
        return pruning.prune(partition, expectedLogEpoch, throughSeq);
    }

    @Override
    public Uni<Long> prunePushResults(String partition, long createdBeforeMs) {
        return pruning.prunePushResults(partition, createdBeforeMs);
    }

    @Override
    public Uni<List<RetentionInputs>> retentionInputs(String afterPartition, int limit, long activeSinceMs) {
        return pruning.retentionInputs(afterPartition, limit, activeSinceMs);
    }
}
