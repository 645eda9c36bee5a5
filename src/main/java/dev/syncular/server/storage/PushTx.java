package dev.syncular.server.storage;

import io.smallrye.mutiny.Uni;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The operations of one push transaction on one partition (§6.4), obtained from
 * {@link SyncStorage#inPartitionTransaction}. The partition row is locked for the transaction's lifetime,
 * so pushes to one partition are serialized and commitSeq assignment is dense and gap-free. All reads see
 * the transaction's own writes. Calls must be sequenced (compose the {@code Uni}s; never run two of them
 * concurrently on the same {@code PushTx}).
 */
public interface PushTx {

    /** The partition this transaction locked. */
    String partition();

    /** The partition state as locked at transaction start, with maxCommitSeq reflecting appends so far. */
    PartitionState state();

    /** The locked re-check of the idempotency key (§2.3); {@code null} item when no result is retained. */
    Uni<PushOutcome> findPushResult(String clientId, String clientCommitId);

    /** Current projection rows for the given ids (missing ids are absent from the map), keyed by rowId. */
    Uni<Map<String, StoredRow>> readRows(String table, List<String> rowIds);

    /**
     * Rows of {@code table} whose {@code column} equals {@code value} (the children of a declared
     * reference, §6.11), ordered by row id, at most {@code limit}. A {@code null} value selects the rows
     * whose {@code column} is NULL (a backfill's remaining rows, {@code jobs.ColumnFill}).
     */
    Uni<List<StoredRow>> readRowsWhere(String table, String column, Object value, int limit);

    /**
     * {@link #readRowsWhere(String, String, Object, int)} for a non-null {@code value}, restricted to the rows whose
     * §3.1 stored scopes hold, for every variable of {@code within}, one of its values (a variable left out is not
     * restricted): the children of a §6.11 reference that lie inside the writer's grant (§3.4).
     */
    Uni<List<StoredRow>> readRowsWhereWithin(
            String table, String column, Object value, Map<String, List<String>> within, int limit);

    /**
     * Rows of {@code table} whose {@code column} equals the non-null {@code value}, after {@code afterRowId}
     * (exclusive, by row id bytes; {@code null} from the first), at most {@code limit}: the keyset pages of the
     * §6.8 candidate scan.
     */
    Uni<List<StoredRow>> readRowsWhere(String table, String column, Object value, String afterRowId, int limit);

    /** The row's tombstone (§2.2 delete precedence), or a {@code null} item. */
    Uni<Tombstone> readTombstone(String table, String rowId);

    /** The serve gate re-read under the partition lock (the push transaction's re-evaluation). */
    Uni<ServeGate> readServeGate(int runningSchemaVersion);

    /** {@link SyncStorage#advanceCheckpoint} inside this transaction, so a backfill batch and its watermark commit together. */
    Uni<Boolean> advanceCheckpoint(String name, long ownerEpoch, long watermark, long observedRows, long nowMs);

    /**
     * Appends one commit: assigns {@code maxCommitSeq + 1}, writes the commit, its changes (row payload
     * encoded with the table's full-row codec, §2.4), the commit→scope-key index (§3.1), and bumps
     * maxCommitSeq. Fails with {@code sync.missing_scopes} when a change carries no scope map (§3.1).
     * {@code traceParent} is the W3C {@code traceparent} of the sampled span pushing the commit, stored with it
     * for the fan-out of every pod to link to ({@link StoredCommit#traceParent}), or {@link StoredCommit#UNTRACED}.
     *
     * @return the assigned commitSeq
     */
    Uni<Long> appendCommit(
            String actorId,
            String clientId,
            String clientCommitId,
            long createdAtMs,
            List<ChangeToWrite> changes,
            String traceParent);

    /**
     * Writes the row projection (insert or replace), its stored-scope index, and clears any tombstone of the
     * row (§2.2: an insert over an absent row clears the tombstone; an existing row has none). For a table with
     * {@code blob_ref} columns the row's blob reference index entries (§5.9.4) become exactly its non-NULL
     * {@code blob_ref} values' blob ids (entries of old values are dropped). A row a declared unique index of the
     * table refuses (another row of the partition holds its key, schema IR {@code indexes} with {@code unique})
     * fails the transaction's work with {@link StorageException#UNIQUE_VIOLATION}; writes may be pipelined, so the
     * failure may surface at a later call or at the commit, never as a partial write.
     */
    Uni<Void> upsertRow(String table, StoredRow row);

    /**
     * {@link #upsertRow(String, StoredRow)} replacing {@code stored}, the row as this transaction read it
     * (same table and row id, currently stored). The effect is the same; the storage may skip index
     * maintenance the stored row already satisfies (an existing row has no tombstone; unchanged stored scopes
     * keep their index entries).
     */
    default Uni<Void> upsertRow(String table, StoredRow row, StoredRow stored) {
        return upsertRow(table, row);
    }

    /**
     * Removes the projection row, its scope index and blob reference index entries, and records the tombstone
     * at commitSeq (§2.2).
     */
    Uni<Void> deleteRow(String table, String rowId, long commitSeq);

    /** {@link SyncStorage#readReferencedBlobIds} under the partition lock (the orphan sweep's re-check, §5.9.2). */
    Uni<Set<String>> referencedBlobIds(Collection<String> blobIds);

    /**
     * Records {@code blobIds} as swept by the orphan sweep under a new sweep mark (above every earlier mark of
     * the partition), pending until {@link SyncStorage#settleBlobSweep}; the sweep deletes the objects only after
     * this transaction committed. Yields the new mark ({@code 0} when {@code blobIds} is empty).
     */
    Uni<Long> recordBlobSweep(Collection<String> blobIds, long nowMs);

    /**
     * The subset of {@code blobIds} a sweep recorded with a mark above {@code sweepMark}, or whose deletion is
     * still pending (§5.9.6 re-check).
     */
    Uni<Set<String>> blobsSweptSince(Collection<String> blobIds, long sweepMark);

    /**
     * Persists the result under (partition, clientId, clientCommitId) in this transaction (§6.4). Fails with
     * {@code sync.storage.duplicate_push_result} when the key already holds one.
     */
    Uni<Void> savePushResult(String clientId, String clientCommitId, PushOutcome outcome);

    /**
     * Appends the reactions a planner returned for the commit at {@code commitSeq} (§6.9), pending and due now,
     * in this transaction: they exist exactly when the commit does.
     */
    Uni<Void> appendReactions(
            long commitSeq, String clientId, String clientCommitId, List<PlannedReaction> reactions, long nowMs);

    /**
     * Runs one read-only statement on this transaction's connection — it sees every write of the transaction —
     * guarded: a statement that fails (an error, the statement timeout) fails the {@code Uni} with
     * {@link StorageException#QUERY_FAILED} ({@code details.sqlstate}) and leaves the transaction usable (SPEC §6.7
     * {@code queryAuthoritative}: a registered query rewritten to the commit's partition, REMOTE.md §2). The
     * statement reads its arguments from one text array, {@code $1}: {@code $1[1]} is {@link #partition()},
     * {@code $1[k + 1]} the k-th of {@code binds} (text or null; the statement casts each to its type). Values come
     * back as PostgreSQL writes them in JSON: text, numbers ({@code Long} when integral, else {@code Double}),
     * booleans, null, {@code bytea} as its {@code \x} hex text, {@code json} as its JSON text.
     */
    Uni<QueryRows> queryRows(String sql, List<String> binds);

    /**
     * Runs {@code work} under a SQL savepoint that is always rolled back: nothing it wrote persists (not even on
     * success), its item or failure is propagated, and the transaction stays usable either way. For reads over
     * writes the commit has not made yet (the staged rows a §6.7 {@code queryAuthoritative} must see).
     */
    <T> Uni<T> rolledBack(Supplier<Uni<T>> work);

    /**
     * Runs {@code work} under a SQL savepoint. When it fails, every write it made (including a commitSeq it
     * appended) is rolled back and the failure is propagated, leaving the outer transaction usable — e.g. to
     * persist a {@code rejected} result for the same commit (§6.4 "savepoint or equivalent").
     */
    <T> Uni<T> savepoint(Supplier<Uni<T>> work);
}
