package dev.syncular.server.conformance;

import dev.syncular.server.storage.ChangeToWrite;
import dev.syncular.server.storage.PartitionState;
import dev.syncular.server.storage.PlannedReaction;
import dev.syncular.server.storage.PushOutcome;
import dev.syncular.server.storage.PushTx;
import dev.syncular.server.storage.QueryRows;
import dev.syncular.server.storage.ServeGate;
import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.storage.Tombstone;
import io.smallrye.mutiny.Uni;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * A {@link PushTx} that forwards every call, default methods included, to another: the base of the conformance host's
 * decorators of a push transaction ({@link IdempotencyLookupFault}).
 */
abstract class ForwardingPushTx implements PushTx {
    protected final PushTx delegate;

    ForwardingPushTx(PushTx delegate) {
        this.delegate = delegate;
    }

    @Override
    public String partition() {
        return delegate.partition();
    }

    @Override
    public PartitionState state() {
        return delegate.state();
    }

    @Override
    public Uni<PushOutcome> findPushResult(String clientId, String clientCommitId) {
        return delegate.findPushResult(clientId, clientCommitId);
    }

    @Override
    public Uni<Map<String, StoredRow>> readRows(String table, List<String> rowIds) {
        return delegate.readRows(table, rowIds);
    }

    @Override
    public Uni<List<StoredRow>> readRowsWhere(String table, String column, Object value, int limit) {
        return delegate.readRowsWhere(table, column, value, limit);
    }

    @Override
    public Uni<List<StoredRow>> readRowsWhereWithin(
            String table, String column, Object value, Map<String, List<String>> within, int limit) {
        return delegate.readRowsWhereWithin(table, column, value, within, limit);
    }

    @Override
    public Uni<List<StoredRow>> readRowsWhere(String table, String column, Object value, String afterRowId, int limit) {
        return delegate.readRowsWhere(table, column, value, afterRowId, limit);
    }

    @Override
    public Uni<Tombstone> readTombstone(String table, String rowId) {
        return delegate.readTombstone(table, rowId);
    }

    @Override
    public Uni<ServeGate> readServeGate(int runningSchemaVersion) {
        return delegate.readServeGate(runningSchemaVersion);
    }

    @Override
    public Uni<Boolean> advanceCheckpoint(String name, long ownerEpoch, long watermark, long observedRows, long nowMs) {
        return delegate.advanceCheckpoint(name, ownerEpoch, watermark, observedRows, nowMs);
    }

    @Override
    public Uni<Long> appendCommit(
            String actorId,
            String clientId,
            String clientCommitId,
            long createdAtMs,
            List<ChangeToWrite> changes,
            String traceParent) {
        return delegate.appendCommit(actorId, clientId, clientCommitId, createdAtMs, changes, traceParent);
    }

    @Override
    public Uni<Void> upsertRow(String table, StoredRow row) {
        return delegate.upsertRow(table, row);
    }

    @Override
    public Uni<Void> upsertRow(String table, StoredRow row, StoredRow stored) {
        return delegate.upsertRow(table, row, stored);
    }

    @Override
    public Uni<Void> deleteRow(String table, String rowId, long commitSeq) {
        return delegate.deleteRow(table, rowId, commitSeq);
    }

    @Override
    public Uni<Set<String>> referencedBlobIds(Collection<String> blobIds) {
        return delegate.referencedBlobIds(blobIds);
    }

    @Override
    public Uni<Long> recordBlobSweep(Collection<String> blobIds, long nowMs) {
        return delegate.recordBlobSweep(blobIds, nowMs);
    }

    @Override
    public Uni<Set<String>> blobsSweptSince(Collection<String> blobIds, long sweepMark) {
        return delegate.blobsSweptSince(blobIds, sweepMark);
    }

    @Override
    public Uni<Void> savePushResult(String clientId, String clientCommitId, PushOutcome outcome) {
        return delegate.savePushResult(clientId, clientCommitId, outcome);
    }

    @Override
    public Uni<Void> appendReactions(
            long commitSeq, String clientId, String clientCommitId, List<PlannedReaction> reactions, long nowMs) {
        return delegate.appendReactions(commitSeq, clientId, clientCommitId, reactions, nowMs);
    }

    @Override
    public Uni<QueryRows> queryRows(String sql, List<String> binds) {
        return delegate.queryRows(sql, binds);
    }

    @Override
    public <T> Uni<T> rolledBack(Supplier<Uni<T>> work) {
        return delegate.rolledBack(work);
    }

    @Override
    public <T> Uni<T> savepoint(Supplier<Uni<T>> work) {
        return delegate.savepoint(work);
    }
}
