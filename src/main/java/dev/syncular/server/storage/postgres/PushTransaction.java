package dev.syncular.server.storage.postgres;

import static dev.syncular.server.storage.postgres.PgSql.first;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.ChangeToWrite;
import dev.syncular.server.storage.PartitionState;
import dev.syncular.server.storage.PlannedReaction;
import dev.syncular.server.storage.PushOutcome;
import dev.syncular.server.storage.PushTx;
import dev.syncular.server.storage.QueryRows;
import dev.syncular.server.storage.ServeGate;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.StoredCommit;
import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.storage.Tombstone;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * One work's view of a partition transaction ({@link PushTx}; §6.4: pushes serialized per partition, each
 * commit atomic), created by {@link PushQueue} under the partition lock. Writes the commit log (§2.1, §2.2:
 * dense commit seqs, changes, the commit-to-scope index; the append's writer version meets the §2.4 writer
 * fence), the row projection with its row-to-scope index, tombstones and the blob reference index (§5.9.4),
 * and the idempotency record (§2.3); reads under the lock (§6.2 conflict detection, §6.3 the locked
 * idempotency lookup, the §2.4 serve gate), answering from the group's {@link PushReadAhead} when it may.
 *
 * <p>Writes are pipelined: sent at once and awaited by the next read, savepoint or the commit. An append is
 * held back until its idempotency record can join its statement ({@link PushContext#appendCommitWithResult}).
 */
final class PushTransaction implements PushTx {

    private final PushContext x;
    private final SqlConnection conn;
    private final PartitionState locked;
    /** What the group's works wrote so far (this one included). */
    private final PushReadAhead.GroupWrites writes;
    /** This work's read-ahead, or null. */
    private final PushReadAhead.PreRead pre;

    long maxCommitSeq;
    /**
     * The commits this work appended and has not rolled back, whole and decoded from the payloads written, for
     * {@link PushContext#recent} once the group commits; empty when that is off.
     */
    final List<StoredCommit> appended = new ArrayList<>(1);

    private int savepoints;
    /** The serve gate row read right after the lock (all schema versions); used by the first read. */
    Row gate;
    /** A pipelined serve gate read (all schema versions) for the first {@link #readServeGate}, or null. */
    CompletableFuture<RowSet<Row>> gateRead;
    /** Writes sent (pipelined) and not awaited yet, in order. */
    List<CompletableFuture<?>> pending = new ArrayList<>();
    /**
     * The last {@link #appendCommit}, not sent yet, and the writes issued after it (unsubscribed, in
     * order): held so that the commit's idempotency record, saved after its row writes, joins the commit's
     * statement ({@link PushContext#appendCommitWithResult}). Released, in issue order, by {@link #savePushResult}
     * or at the next read, savepoint or flush.
     */
    private HeldAppend held;

    /**
     * Sends a write now (behind a held append: holds it, to go out after the append); its outcome is awaited
     * by the next read, savepoint or the commit.
     */
    private void send(Uni<?> write) {
        gate = null;
        gateRead = null;
        if (held != null) {
            held.after.add(write);
        } else {
            pending.add(write.subscribeAsCompletionStage());
        }
    }

    /** Forgets the held append and the writes behind it (never sent): the work failed and rolls back. */
    void dropHeld() {
        held = null;
    }

    /** Sends the held append (with {@code result} when not null) and the writes held behind it. */
    private void release(Tuple result) {
        HeldAppend h = held;
        if (h == null) {
            return;
        }
        held = null;
        int writerVersion = h.writerVersion;
        Uni<?> append;
        if (result == null) {
            append = conn.preparedQuery(x.appendCommit).execute(h.args);
        } else {
            for (int i = 0; i < result.size(); i++) {
                h.args.addValue(result.getValue(i));
            }
            append = conn.preparedQuery(x.appendCommitWithResult)
                    .execute(h.args)
                    .onFailure()
                    .transform(PushResults::duplicate);
        }
        pending.add(append.onFailure()
                .transform(e -> CheckpointStore.fenceRejection(e, writerVersion))
                .subscribeAsCompletionStage());
        for (Uni<?> w : h.after) {
            pending.add(w.subscribeAsCompletionStage());
        }
    }

    /** Awaits the pipelined writes; fails with the first failure (later ones are its consequence). */
    Uni<Void> flush() {
        return PgSql.allSettled(handOver());
    }

    /**
     * Sends the held append and hands over every write sent and not awaited yet, for the group to await before
     * its {@code COMMIT} ({@link PushQueue}: a group's works pipelined back to back).
     */
    List<CompletableFuture<?>> handOver() {
        release(null);
        if (pending.isEmpty()) {
            return List.of();
        }
        List<CompletableFuture<?>> sent = pending;
        pending = new ArrayList<>();
        return sent;
    }

    /** {@code read} after the pending writes completed (a failed write fails the read with its error). */
    private <R> Uni<R> afterWrites(Supplier<Uni<R>> read) {
        gate = null;
        gateRead = null;
        return flush().chain(() -> Uni.createFrom().<R>deferred(() -> read.get()));
    }

    PushTransaction(
            PushContext x,
            SqlConnection conn,
            PartitionState locked,
            PushReadAhead.GroupWrites writes,
            PushReadAhead.PreRead pre) {
        this.x = x;
        this.conn = conn;
        this.locked = locked;
        this.maxCommitSeq = locked.maxCommitSeq();
        this.writes = writes;
        this.pre = pre;
    }

    @Override
    public String partition() {
        return locked.partition();
    }

    @Override
    public PartitionState state() {
        return new PartitionState(
                locked.partition(),
                locked.logEpoch(),
                maxCommitSeq,
                locked.horizonSeq(),
                locked.createdAtMs(),
                locked.lastSeenAtMs());
    }

    @Override
    public Uni<PushOutcome> findPushResult(String clientId, String clientCommitId) {
        if (pre != null && pre.answers(clientId, clientCommitId, writes)) {
            // read ahead under the lock, and no work of the group wrote the key since (see PushReadAhead)
            x.readAheadAnswers.increment();
            gate = null;
            gateRead = null;
            return Uni.createFrom().item(pre.outcome);
        }
        return afterWrites(() -> x.results.findPushResult(conn, partition(), clientId, clientCommitId));
    }

    @Override
    public Uni<Map<String, StoredRow>> readRows(String table, List<String> rowIds) {
        Map<String, StoredRow> ahead = pre == null ? null : pre.rows(table, rowIds, writes);
        if (ahead != null) {
            // read ahead under the lock, and no work of the group wrote these rows since (see PushReadAhead)
            x.readAheadAnswers.increment();
            gate = null;
            gateRead = null;
            return Uni.createFrom().item(ahead);
        }
        return afterWrites(() -> x.rows.readRows(conn, partition(), table, rowIds));
    }

    @Override
    public Uni<List<StoredRow>> readRowsWhere(String table, String column, Object value, int limit) {
        return afterWrites(() -> x.rows.readRowsWhere(conn, partition(), table, column, value, limit));
    }

    @Override
    public Uni<List<StoredRow>> readRowsWhereWithin(
            String table, String column, Object value, Map<String, List<String>> within, int limit) {
        return afterWrites(() -> x.rows.readRowsWhereWithin(conn, partition(), table, column, value, within, limit));
    }

    @Override
    public Uni<List<StoredRow>> readRowsWhere(String table, String column, Object value, String afterRowId, int limit) {
        return afterWrites(() -> x.rows.readRowsWhereAfter(
                conn, partition(), table, column, value, afterRowId == null ? "" : afterRowId, limit));
    }

    @Override
    public Uni<Tombstone> readTombstone(String table, String rowId) {
        return afterWrites(() -> conn.preparedQuery(x.readTombstone)
                .execute(Tuple.of(partition(), table, rowId))
                .map(rs -> {
                    Row r = first(rs);
                    return r == null ? null : new Tombstone(table, rowId, r.getLong(0));
                }));
    }

    @Override
    public Uni<ServeGate> readServeGate(int runningSchemaVersion) {
        Row first = gate;
        if (first != null) { // no statement of this work ran yet (any clears it)
            gate = null;
            try {
                return Uni.createFrom().item(ServeGateReads.serveGate(first, runningSchemaVersion));
            } catch (RuntimeException e) {
                return Uni.createFrom().failure(e);
            }
        }
        gate = null;
        CompletableFuture<RowSet<Row>> sent = gateRead;
        if (sent != null) {
            gateRead = null;
            // sent after the pending statements: awaiting them first keeps their failure first
            return flush().chain(() -> Uni.createFrom().completionStage(sent))
                    .map(rs -> ServeGateReads.serveGate(first(rs), runningSchemaVersion));
        }
        return afterWrites(() -> x.gates.readServeGate(conn, partition(), runningSchemaVersion));
    }

    @Override
    public Uni<Boolean> advanceCheckpoint(String name, long ownerEpoch, long watermark, long observedRows, long nowMs) {
        gate = null;
        writes.gateMoved = true;
        return afterWrites(() ->
                x.checkpoints.advanceCheckpoint(conn, partition(), name, ownerEpoch, watermark, observedRows, nowMs));
    }

    @Override
    public Uni<Long> appendCommit(
            String actorId,
            String clientId,
            String clientCommitId,
            long createdAtMs,
            List<ChangeToWrite> changes,
            String traceParent) {
        long seq = maxCommitSeq + 1;
        CompiledSchema writer = x.installed.schema();
        if (writer == null) {
            return Uni.createFrom()
                    .failure(new StorageException(
                            StorageException.INVALID_ARGUMENT, "ensureSchema has not completed", Map.of()));
        }
        int writerVersion = writer.version();
        CommitAppend.Args built;
        try {
            built = CommitAppend.args(
                    x.installed,
                    partition(),
                    seq,
                    actorId,
                    clientId,
                    clientCommitId,
                    createdAtMs,
                    changes,
                    writerVersion,
                    traceParent);
        } catch (RuntimeException e) {
            return Uni.createFrom().failure(e);
        }
        Tuple args = built.tuple();
        // one statement, held until the idempotency record can join it (see #held)
        release(null);
        gate = null;
        gateRead = null;
        held = new HeldAppend(args, writerVersion);
        maxCommitSeq = seq;
        if (x.recent.enabled()) {
            appended.add(CommitAppend.storedCommit(
                    x.installed, seq, actorId, clientId, clientCommitId, createdAtMs, changes, traceParent, built));
        }
        return Uni.createFrom().item(seq);
    }

    @Override
    public Uni<Void> upsertRow(String table, StoredRow row) {
        return upsertRow(table, row, null);
    }

    /** With {@code stored} (the row as currently stored), no tombstone delete and, for unchanged scopes, no scope-index rewrite. */
    @Override
    public Uni<Void> upsertRow(String table, StoredRow row, StoredRow stored) {
        RowTable rt;
        Tuple args;
        String upsert;
        String[] keys;
        try {
            rt = x.installed.table(table);
            TableSchema ts = rt.schema;
            Object[] values = row.values();
            if (values.length != ts.columnCount() || row.columnVersions().length != ts.columnCount()) {
                throw new StorageException(
                        StorageException.INVALID_ARGUMENT,
                        "row has the wrong number of columns",
                        Map.of("table", table));
            }
            keys = rt.scopeKeys(row.scopes());
            args = rt.upsertArgs(partition(), row);
            upsert = rt.upsertSql;
        } catch (RuntimeException e) {
            return Uni.createFrom().failure(e);
        }
        writes.rows.add(PushReadAhead.rowKey(table, row.rowId()));
        // a declared unique index refusing the row fails this work with sync.storage.unique_violation
        // (UniqueIndexes); pipelined, it surfaces where the work's writes are awaited
        RowTable written = rt;
        Tuple bound = args;
        Uni<?> write = stored != null && stored.rowId().equals(row.rowId())
                // stored, read under this lock: a plain update (no tuple-lock record); should it find no row after
                // all, the upsert
                ? conn.preparedQuery(rt.updateSql)
                        .execute(bound)
                        .chain(rs -> rs.rowCount() == 1
                                ? Uni.createFrom().item(rs)
                                : conn.preparedQuery(upsert).execute(bound))
                : conn.preparedQuery(upsert).execute(bound);
        send(write.onFailure().transform(e -> UniqueIndexes.refusal(e, written, row.rowId())));
        // the scope index holds exactly the keys of the stored scopes: unchanged keys need no rewrite
        if (stored == null
                || !stored.rowId().equals(row.rowId())
                || !Arrays.equals(rt.scopeKeys(stored.scopes()), keys)) {
            send(conn.preparedQuery(x.deleteRowScopes).execute(Tuple.of(partition(), table, row.rowId())));
            send(conn.preparedQuery(x.insertRowScopes)
                    .execute(Tuple.of(partition(), table, row.rowId()).addArrayOfString(keys)));
        }
        if (stored == null || !stored.rowId().equals(row.rowId())) {
            send(conn.preparedQuery(x.deleteTombstone).execute(Tuple.of(partition(), table, row.rowId())));
        }
        if (rt.blobRefColumns.length > 0) {
            // §5.9.4: the row's entries become exactly its current references (old values dropped)
            send(x.blobs.deleteRefs(conn, partition(), table, row.rowId()));
            String[] blobIds = rt.blobIds(row.values());
            if (blobIds.length > 0) {
                send(x.blobs.insertRefs(
                        conn, partition(), table, row.rowId(), StoredScopes.scopesJson(row.scopes()), blobIds));
            }
        }
        return Uni.createFrom().voidItem();
    }

    @Override
    public Uni<Void> deleteRow(String table, String rowId, long commitSeq) {
        RowTable rt;
        try {
            rt = x.installed.table(table);
        } catch (RuntimeException e) {
            return Uni.createFrom().failure(e);
        }
        writes.rows.add(PushReadAhead.rowKey(table, rowId));
        send(conn.preparedQuery(rt.deleteSql).execute(Tuple.of(partition(), rowId)));
        send(conn.preparedQuery(x.deleteRowScopes).execute(Tuple.of(partition(), table, rowId)));
        if (rt.blobRefColumns.length > 0) {
            send(x.blobs.deleteRefs(conn, partition(), table, rowId));
        }
        send(conn.preparedQuery(x.upsertTombstone).execute(Tuple.of(partition(), table, rowId, commitSeq)));
        return Uni.createFrom().voidItem();
    }

    @Override
    public Uni<Set<String>> referencedBlobIds(Collection<String> blobIds) {
        return afterWrites(() -> x.blobs.readReferencedBlobIds(conn, partition(), blobIds));
    }

    @Override
    public Uni<Long> recordBlobSweep(Collection<String> blobIds, long nowMs) {
        if (blobIds.isEmpty()) {
            return Uni.createFrom().item(0L);
        }
        return afterWrites(() -> x.blobs.recordSweeps(conn, partition(), nowMs, blobIds));
    }

    @Override
    public Uni<Set<String>> blobsSweptSince(Collection<String> blobIds, long sweepMark) {
        if (blobIds.isEmpty()) {
            return Uni.createFrom().item(Set.of());
        }
        return afterWrites(() -> x.blobs.sweptSince(conn, partition(), sweepMark, blobIds));
    }

    @Override
    public Uni<Void> appendReactions(
            long commitSeq, String clientId, String clientCommitId, List<PlannedReaction> reactions, long nowMs) {
        send(conn.preparedQuery(x.appendReactions)
                .execute(PostgresReactionStore.appendArgs(
                        partition(), clientId, clientCommitId, commitSeq, reactions, nowMs)));
        return Uni.createFrom().voidItem();
    }

    @Override
    public Uni<Void> savePushResult(String clientId, String clientCommitId, PushOutcome outcome) {
        // pipelined with the commit's other writes; a duplicate key fails the statement and aborts the transaction
        writes.keys.add(PushReadAhead.pushKey(clientId, clientCommitId));
        Tuple result = PushResults.resultArgs(clientId, clientCommitId, outcome);
        if (held != null) {
            // the applied commit's record: one statement with the commit's log writes
            gate = null;
            gateRead = null;
            release(result);
            return Uni.createFrom().voidItem();
        }
        send(conn.preparedQuery(x.results.insertPushResult)
                .execute(PushResults.insertArgs(partition(), result))
                .onFailure()
                .transform(PushResults::duplicate));
        return Uni.createFrom().voidItem();
    }

    @Override
    public Uni<QueryRows> queryRows(String sql, List<String> binds) {
        String[] args = new String[binds.size() + 1];
        args[0] = partition();
        for (int i = 0; i < binds.size(); i++) {
            args[i + 1] = binds.get(i);
        }
        return afterWrites(() -> conn.preparedQuery(x.guardedQuery)
                .execute(Tuple.of(sql).addArrayOfString(args))
                .map(rs -> GuardedRows.parse(first(rs).getString(0))));
    }

    /** After a rollback to a savepoint: the commits appended since are gone. */
    private void rollBackTo(long seqBefore) {
        maxCommitSeq = seqBefore;
        appended.removeIf(c -> c.commitSeq() > seqBefore);
    }

    @Override
    public <T> Uni<T> rolledBack(Supplier<Uni<T>> work) {
        String name = "syncular_sp_" + (++savepoints);
        long seqBefore = maxCommitSeq;
        return afterWrites(() -> conn.query("SAVEPOINT " + name).execute())
                .chain(() -> Uni.createFrom()
                        .<T>deferred(() -> work.get())
                        .call(this::flush)
                        .onItemOrFailure()
                        .transformToUni((item, failure) -> Uni.createFrom()
                                .deferred(() -> {
                                    dropHeld();
                                    return flush();
                                })
                                .onFailure()
                                .recoverWithNull()
                                .chain(() -> conn.query("ROLLBACK TO SAVEPOINT " + name)
                                        .execute())
                                .chain(() ->
                                        conn.query("RELEASE SAVEPOINT " + name).execute())
                                .invoke(() -> rollBackTo(seqBefore))
                                .chain(() -> failure != null
                                        ? Uni.createFrom().<T>failure(failure)
                                        : Uni.createFrom().item(item))));
    }

    @Override
    public <T> Uni<T> savepoint(Supplier<Uni<T>> work) {
        String name = "syncular_sp_" + (++savepoints);
        long seqBefore = maxCommitSeq;
        return afterWrites(() -> conn.query("SAVEPOINT " + name).execute())
                .chain(() -> Uni.createFrom().<T>deferred(() -> work.get()).call(this::flush))
                .onFailure()
                .call(() -> Uni.createFrom()
                        .deferred(() -> {
                            dropHeld();
                            return flush();
                        })
                        .onFailure()
                        .recoverWithNull()
                        .chain(() -> conn.query("ROLLBACK TO SAVEPOINT " + name).execute())
                        .invoke(() -> rollBackTo(seqBefore)))
                .call(() -> conn.query("RELEASE SAVEPOINT " + name).execute());
    }
}
