package dev.syncular.server.conformance;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.storage.ActivationResult;
import dev.syncular.server.storage.BlobReference;
import dev.syncular.server.storage.CheckpointDeclaration;
import dev.syncular.server.storage.ClientRecord;
import dev.syncular.server.storage.CommitQuery;
import dev.syncular.server.storage.CommitWindow;
import dev.syncular.server.storage.GateCheck;
import dev.syncular.server.storage.PartitionState;
import dev.syncular.server.storage.PruneResult;
import dev.syncular.server.storage.PushOutcome;
import dev.syncular.server.storage.PushReadHint;
import dev.syncular.server.storage.PushTx;
import dev.syncular.server.storage.RecentCommits;
import dev.syncular.server.storage.RequestEntry;
import dev.syncular.server.storage.RetentionInputs;
import dev.syncular.server.storage.ServeGate;
import dev.syncular.server.storage.SnapshotRows;
import dev.syncular.server.storage.SocketEntry;
import dev.syncular.server.storage.StoredCheckpoint;
import dev.syncular.server.storage.StoredCommit;
import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.storage.SyncStorage;
import io.smallrye.mutiny.Uni;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * A {@link SyncStorage} that forwards every call, default methods included, to another: the base of the conformance
 * host's decorators of an instance's storage ({@link IdempotencyLookupFault}).
 */
abstract class ForwardingSyncStorage implements SyncStorage {
    protected final SyncStorage delegate;

    ForwardingSyncStorage(SyncStorage delegate) {
        this.delegate = delegate;
    }

    @Override
    public RecentCommits recentCommits() {
        return delegate.recentCommits();
    }

    @Override
    public Uni<Void> ensureSchema(CompiledSchema schema) {
        return delegate.ensureSchema(schema);
    }

    @Override
    public Uni<Void> ensureSchema(CompiledSchema schema, List<CheckpointDeclaration> checkpoints) {
        return delegate.ensureSchema(schema, checkpoints);
    }

    @Override
    public Uni<ServeGate> readServeGate(String partition, int runningSchemaVersion) {
        return delegate.readServeGate(partition, runningSchemaVersion);
    }

    @Override
    public Uni<GateCheck> readGateCheck(String partition, int runningSchemaVersion) {
        return delegate.readGateCheck(partition, runningSchemaVersion);
    }

    @Override
    public Uni<PartitionState> touchPartition(String partition, long nowMs) {
        return delegate.touchPartition(partition, nowMs);
    }

    @Override
    public Uni<RequestEntry> enterRequest(String partition, String clientId, int runningSchemaVersion, long nowMs) {
        return delegate.enterRequest(partition, clientId, runningSchemaVersion, nowMs);
    }

    @Override
    public Uni<GateCheck> finishRequest(String partition, int runningSchemaVersion, ClientRecord client) {
        return delegate.finishRequest(partition, runningSchemaVersion, client);
    }

    @Override
    public Uni<PartitionState> readPartition(String partition) {
        return delegate.readPartition(partition);
    }

    @Override
    public Uni<List<PartitionState>> listPartitions() {
        return delegate.listPartitions();
    }

    @Override
    public Uni<List<PartitionState>> listPartitions(String afterPartition, int limit) {
        return delegate.listPartitions(afterPartition, limit);
    }

    @Override
    public Uni<PartitionState> rotateLogEpoch(String partition) {
        return delegate.rotateLogEpoch(partition);
    }

    @Override
    public <T> Uni<T> inPartitionTransaction(String partition, Function<PushTx, Uni<T>> work) {
        return delegate.inPartitionTransaction(partition, work);
    }

    @Override
    public <T> Uni<T> inPartitionTransaction(String partition, PushReadHint hint, Function<PushTx, Uni<T>> work) {
        return delegate.inPartitionTransaction(partition, hint, work);
    }

    @Override
    public Uni<PushOutcome> findPushResult(String partition, String clientId, String clientCommitId) {
        return delegate.findPushResult(partition, clientId, clientCommitId);
    }

    @Override
    public Uni<CommitWindow> readCommits(String partition, CommitQuery query) {
        return delegate.readCommits(partition, query);
    }

    @Override
    public Uni<List<StoredRow>> readRowsPage(
            String partition, String table, Map<String, Set<String>> scopes, String afterRowId, int limit) {
        return delegate.readRowsPage(partition, table, scopes, afterRowId, limit);
    }

    @Override
    public Uni<Map<String, StoredRow>> readRows(String partition, String table, List<String> rowIds) {
        return delegate.readRows(partition, table, rowIds);
    }

    @Override
    public Uni<SnapshotRows> readSnapshotPage(
            String partition,
            String table,
            Map<String, Set<String>> scopes,
            String afterRowId,
            int limit,
            long maxBytes) {
        return delegate.readSnapshotPage(partition, table, scopes, afterRowId, limit, maxBytes);
    }

    @Override
    public Uni<Long> readScopePin(String partition, String table, String variable, Set<String> values, long upToSeq) {
        return delegate.readScopePin(partition, table, variable, values, upToSeq);
    }

    @Override
    public Uni<List<StoredRow>> readAllRows(String partition, String table) {
        return delegate.readAllRows(partition, table);
    }

    @Override
    public Uni<Map<String, Long>> countRows(String partition) {
        return delegate.countRows(partition);
    }

    @Override
    public Uni<Void> upsertClient(ClientRecord record) {
        return delegate.upsertClient(record);
    }

    @Override
    public Uni<ClientRecord> readClient(String partition, String clientId) {
        return delegate.readClient(partition, clientId);
    }

    @Override
    public Uni<SocketEntry> readSocketEntry(String partition, String clientId) {
        return delegate.readSocketEntry(partition, clientId);
    }

    @Override
    public Uni<List<ClientRecord>> listClients(String partition) {
        return delegate.listClients(partition);
    }

    @Override
    public Uni<Boolean> advanceClientCursor(
            String partition, String clientId, String actorId, String logEpoch, long cursor, long nowMs) {
        return delegate.advanceClientCursor(partition, clientId, actorId, logEpoch, cursor, nowMs);
    }

    @Override
    public Uni<StoredCommit> readCommit(String partition, long commitSeq) {
        return delegate.readCommit(partition, commitSeq);
    }

    @Override
    public Uni<List<BlobReference>> readBlobReferences(
            String partition, String blobId, BlobReference after, int limit) {
        return delegate.readBlobReferences(partition, blobId, after, limit);
    }

    @Override
    public Uni<Set<String>> readReferencedBlobIds(String partition, Collection<String> blobIds) {
        return delegate.readReferencedBlobIds(partition, blobIds);
    }

    @Override
    public Uni<Void> recordBlobUpload(String partition, String blobId, String actorId, long nowMs) {
        return delegate.recordBlobUpload(partition, blobId, actorId, nowMs);
    }

    @Override
    public Uni<Set<String>> readBlobsUploadedBy(String partition, String actorId, Collection<String> blobIds) {
        return delegate.readBlobsUploadedBy(partition, actorId, blobIds);
    }

    @Override
    public Uni<Long> readBlobSweepMark(String partition) {
        return delegate.readBlobSweepMark(partition);
    }

    @Override
    public Uni<Void> settleBlobSweep(String partition, long sweepMark, Collection<String> blobIds) {
        return delegate.settleBlobSweep(partition, sweepMark, blobIds);
    }

    @Override
    public Uni<Long> forgetBlobSweeps(long sweptBeforeMs) {
        return delegate.forgetBlobSweeps(sweptBeforeMs);
    }

    @Override
    public Uni<PruneResult> prune(String partition, String expectedLogEpoch, long throughSeq) {
        return delegate.prune(partition, expectedLogEpoch, throughSeq);
    }

    @Override
    public Uni<Long> prunePushResults(String partition, long createdBeforeMs) {
        return delegate.prunePushResults(partition, createdBeforeMs);
    }

    @Override
    public Uni<List<RetentionInputs>> retentionInputs(String afterPartition, int limit, long activeSinceMs) {
        return delegate.retentionInputs(afterPartition, limit, activeSinceMs);
    }

    @Override
    public Uni<List<StoredCheckpoint>> readPendingCheckpoints(int runningSchemaVersion) {
        return delegate.readPendingCheckpoints(runningSchemaVersion);
    }

    @Override
    public Uni<Integer> readStoredSchemaVersion() {
        return delegate.readStoredSchemaVersion();
    }

    @Override
    public Uni<List<StoredCheckpoint>> readCheckpoints(String partition) {
        return delegate.readCheckpoints(partition);
    }

    @Override
    public Uni<StoredCheckpoint> declareCheckpoint(String partition, String name, int schemaVersion, long nowMs) {
        return delegate.declareCheckpoint(partition, name, schemaVersion, nowMs);
    }

    @Override
    public Uni<StoredCheckpoint> claimCheckpoint(String partition, String name, int schemaVersion, long nowMs) {
        return delegate.claimCheckpoint(partition, name, schemaVersion, nowMs);
    }

    @Override
    public Uni<StoredCheckpoint> abandonCheckpoint(String partition, String name, int schemaVersion) {
        return delegate.abandonCheckpoint(partition, name, schemaVersion);
    }

    @Override
    public Uni<Boolean> advanceCheckpoint(
            String partition, String name, long ownerEpoch, long watermark, long observedRows, long nowMs) {
        return delegate.advanceCheckpoint(partition, name, ownerEpoch, watermark, observedRows, nowMs);
    }

    @Override
    public Uni<ActivationResult> activateCheckpoint(
            String partition, String name, long ownerEpoch, long watermark, List<String> sourceTables, long nowMs) {
        return delegate.activateCheckpoint(partition, name, ownerEpoch, watermark, sourceTables, nowMs);
    }
}
