package dev.syncular.server.storage;

import dev.syncular.server.schema.CompiledSchema;
import io.smallrye.mutiny.Uni;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * Authoritative server storage for SSP2. Storage stores and reads; it makes no protocol decisions
 * (conflict detection, authorization, retention policy and result encoding live in the engine). Every
 * method is non-blocking and returns a {@link Uni}; nothing is cached, so every read observes every commit
 * acknowledged before it (read-after-write).
 *
 * <h2>Model</h2>
 *
 * <ul>
 *   <li><b>Partition registry</b> (§2.1): one entry per partition with an opaque random {@code logEpoch},
 *       {@code maxCommitSeq}, {@code horizonSeq} (§4.6) and created/last-seen times. Partitions are created
 *       by {@link #touchPartition}; every other partition-scoped write requires a registered partition and
 *       fails with {@code sync.storage.unknown_partition} otherwise.
 *   <li><b>Commit log</b> (§2.1, §2.2): commits with dense, gap-free commitSeqs per partition; changes carry
 *       the full-row payload (encoded with the table's full-row codec, §2.4, decoded back to Java values on
 *       read) and the stored scopes; the commit→scope-key inverted index (§3.1, key = pattern prefix + ':' +
 *       value) drives pull filtering.
 *   <li><b>Row projection</b>: one relational table per synced table with typed app columns plus the
 *       {@code _sync_*} columns of §2.4; per-row {@code server_version}, {@code column_version} blob (§2.2) and
 *       stored scopes, with a row→scope-key index for bootstrap pages (§4.7).
 *   <li><b>Tombstones</b> (§2.2), <b>push results</b> (§2.3) and <b>client cursor records</b> (§4.5).
 * </ul>
 *
 * <h2>Scope matching</h2>
 *
 * Reads take effective scopes as {@code variable → values}. A change or row matches when, for every
 * effective variable, its stored value is in the list (§3.2: variables are independent dimensions, AND
 * across variables, OR within one). The inverted index supplies candidates for one variable; the full
 * predicate is applied to the stored scopes.
 *
 * <h2>Atomicity</h2>
 *
 * {@link #inPartitionTransaction} runs one database transaction holding the partition row lock (§6.4:
 * pushes serialized per partition, each commit one transaction). If the returned {@code Uni} fails, the
 * whole transaction rolls back, so a rejected commit leaves storage exactly as it was; use
 * {@link PushTx#savepoint} to roll back a commit while keeping the transaction for its rejected result.
 */
public interface SyncStorage extends CheckpointStorage, PullReads {

    /**
     * This process's newest commits, told by its pushes once they committed, that answer a pull's §4.5 window
     * without the log when they hold it whole ({@link RecentCommits}); {@link RecentCommits#OFF} when not kept.
     */
    default RecentCommits recentCommits() {
        return RecentCommits.OFF;
    }

    /**
     * Applies the storage DDL for the running schema at start-up (§2.4). Idempotent.
     *
     * <ul>
     *   <li>Core tables are created if absent on every call, independently of the marker.
     *   <li>No marker: creates the row tables and writes the marker (version + per-table layouts) in one
     *       transaction.
     *   <li>Stored version equal to running: writes no DDL and no rows for synced tables; refuses with
     *       {@code sync.storage.stored_layout_mismatch} when the persisted layouts (column name, type,
     *       nullability, order) differ, and with {@code sync.storage.physical_layout_mismatch} when the catalog
     *       disagrees with the storage layout (details {@code table}, {@code column}, {@code reason},
     *       {@code expected}, {@code actual}).
     *   <li>Stored version lower: additive upgrade (new tables, new trailing nullable columns, the
     *       {@code _sync_column_versions} column) plus the new marker in one transaction; other changes fail
     *       with {@code sync.storage.unsupported_migration}. (The writer fence arrives separately.)
     *   <li>Stored version higher: {@code sync.schema_not_ready}.
     * </ul>
     *
     * Subsequent calls use the given schema for row encoding and scope-key derivation.
     */
    Uni<Void> ensureSchema(CompiledSchema schema);

    // ---- backfill checkpoints, writer fence and serve gate (§2.4, RFC 0007 of the seed) -----------------

    /**
     * {@link #ensureSchema(CompiledSchema)} that also installs the checkpoints this build declares
     * (idempotently, state {@code declared}); on a schema-version bump the same transaction raises the
     * writer fence of every registered partition to the new version (never lowering it).
     */
    Uni<Void> ensureSchema(CompiledSchema schema, List<CheckpointDeclaration> checkpoints);

    /** The partition's serve gate for the running schema version, in one statement. */
    Uni<ServeGate> readServeGate(String partition, int runningSchemaVersion);

    /**
     * {@link #readServeGate} and the partition's {@code horizonSeq} from the same snapshot (one statement in
     * the PostgreSQL storage); the horizon is {@code 0} for an unregistered partition.
     */
    default Uni<GateCheck> readGateCheck(String partition, int runningSchemaVersion) {
        return readServeGate(partition, runningSchemaVersion)
                .flatMap(gate -> readPartition(partition)
                        .map(state -> new GateCheck(gate, state == null ? 0L : state.horizonSeq())));
    }

    // ---- partition registry (§2.1) -------------------------------------------------------------

    /**
     * Registers the partition with a fresh unpredictable logEpoch (128 random bits, base64url) if absent,
     * and refreshes its last-seen time. Returns the current state.
     */
    Uni<PartitionState> touchPartition(String partition, long nowMs);

    /**
     * A sync request's entry read: {@link #touchPartition} (registration of an unknown partition and the
     * last-seen refresh included), the partition's {@link #readServeGate serve gate} for
     * {@code runningSchemaVersion} and {@link #readClient the client record} — one round trip (one snapshot)
     * in the common case of the PostgreSQL storage, where partition state, gate and client record are
     * mutually consistent. Registering a partition or writing its last-seen time costs one more statement.
     */
    default Uni<RequestEntry> enterRequest(String partition, String clientId, int runningSchemaVersion, long nowMs) {
        return touchPartition(partition, nowMs)
                .flatMap(state -> readServeGate(partition, runningSchemaVersion)
                        .flatMap(gate ->
                                readClient(partition, clientId).map(client -> new RequestEntry(state, gate, client))));
    }

    /**
     * A sync request's exit: upserts {@code client} (skipped when {@code null}), then {@link #readGateCheck}
     * — in this order, the read after the write, in one round trip where the implementation pipelines them.
     * Fails with the upsert's failure if it fails.
     */
    default Uni<GateCheck> finishRequest(String partition, int runningSchemaVersion, ClientRecord client) {
        Uni<Void> save = client == null ? Uni.createFrom().voidItem() : upsertClient(client);
        return save.flatMap(v -> readGateCheck(partition, runningSchemaVersion));
    }

    /** The partition state, or a {@code null} item when unregistered. */
    Uni<PartitionState> readPartition(String partition);

    /**
     * A realtime socket's upgrade read (§8.1): {@link #readClient the client record} and {@link #readPartition the
     * partition state} — one statement (one snapshot, one round trip) in the PostgreSQL storage, where a reconnect
     * storm's upgrades otherwise queued for the pool twice each.
     */
    default Uni<SocketEntry> readSocketEntry(String partition, String clientId) {
        return readClient(partition, clientId)
                .flatMap(client -> readPartition(partition).map(state -> new SocketEntry(client, state)));
    }

    /** All registered partitions, ordered by id. */
    Uni<List<PartitionState>> listPartitions();

    /**
     * A page of registered partitions: those whose id sorts after {@code afterPartition} in byte order
     * ({@code null} = from the first), ordered by id, at most {@code limit} — operator tooling.
     */
    Uni<List<PartitionState>> listPartitions(String afterPartition, int limit);

    /**
     * Backup-restore rotation (§2.1): replaces the logEpoch with a fresh random value and deletes the
     * partition's client cursor records, in one transaction under the partition lock. Returns the new state.
     */
    Uni<PartitionState> rotateLogEpoch(String partition);

    // ---- push (§2.3, §6.4) ----------------------------------------------------------------------

    /**
     * Runs {@code work} in one transaction that first locks the partition row ({@code SELECT ... FOR
     * UPDATE}). Commits when the work's {@code Uni} succeeds, rolls back everything when it fails.
     */
    <T> Uni<T> inPartitionTransaction(String partition, Function<PushTx, Uni<T>> work);

    /**
     * {@link #inPartitionTransaction(String, Function)} for a push whose work starts with the reads
     * {@code hint} announces (its idempotency key and the rows it reads first). An implementation may answer
     * those reads from a read-ahead taken under the partition lock in the same transaction, provided the
     * answers equal what the plain reads would return at that point of the work (nothing written between the
     * read-ahead and the read). The default ignores the hint.
     */
    default <T> Uni<T> inPartitionTransaction(String partition, PushReadHint hint, Function<PushTx, Uni<T>> work) {
        return inPartitionTransaction(partition, work);
    }

    /** The optimistic (unlocked) idempotency lookup (§2.3); {@code null} item when no result is retained. */
    Uni<PushOutcome> findPushResult(String partition, String clientId, String clientCommitId);

    // ---- pull (§4.5, §4.7) ----------------------------------------------------------------------

    /** The commit window of one subscription, filtered and cut as described by {@link CommitQuery}. */
    Uni<CommitWindow> readCommits(String partition, CommitQuery query);

    /**
     * One bootstrap page (§4.7): current rows of {@code table} matching the effective scopes, with
     * {@code rowId > afterRowId} ({@code null} = from the start), ordered by rowId in byte order
     * ({@code COLLATE "C"}), at most {@code limit} rows.
     */
    Uni<List<StoredRow>> readRowsPage(
            String partition, String table, Map<String, Set<String>> scopes, String afterRowId, int limit);

    /** Current rows by id outside a push transaction (missing ids are absent). */
    Uni<Map<String, StoredRow>> readRows(String partition, String table, List<String> rowIds);

    /**
     * {@link #readRowsPage} for snapshot pages: the same rows in the same order, but an implementation may
     * leave out what a rows segment does not carry — the returned rows' {@code columnVersions} and
     * {@code scopes} are unspecified (possibly empty). Only {@code rowId}, {@code serverVersion} and
     * {@code values} are meaningful. Bounded in bytes as well ({@link SnapshotRows}): the read ends with the row at
     * which the rows' bytes reach {@code maxBytes} (at least one row, whatever its size).
     */
    Uni<SnapshotRows> readSnapshotPage(
            String partition,
            String table,
            Map<String, Set<String>> scopes,
            String afterRowId,
            int limit,
            long maxBytes);

    /**
     * The §4.7 scope pin: the newest {@code commitSeq ≤ upToSeq} whose change to {@code table} carries one of
     * {@code values} for scope {@code variable} in the commit-to-scope index; {@code 0} when none.
     */
    Uni<Long> readScopePin(String partition, String table, String variable, Set<String> values, long upToSeq);

    /** Every row of a table in a partition regardless of scopes, by row id — operator and test tooling only. */
    Uni<List<StoredRow>> readAllRows(String partition, String table);

    /**
     * How many current rows each synced table of the running schema holds in the partition, in schema table
     * order (tables without rows count 0) — operator tooling.
     */
    Uni<Map<String, Long>> countRows(String partition);

    // ---- client cursor records (§4.5) -----------------------------------------------------------

    /** Inserts or replaces the client record. */
    Uni<Void> upsertClient(ClientRecord record);

    /** The client record, or a {@code null} item. */
    Uni<ClientRecord> readClient(String partition, String clientId);

    /** All client records of the partition (retention watermark input, §4.6), ordered by client id. */
    Uni<List<ClientRecord>> listClients(String partition);

    /**
     * §8.2 realtime ack: advances the existing client record's cursor and update time to the maxima of the
     * stored and the given values (the cursor capped at the partition's {@code maxCommitSeq}), in one atomic
     * statement, only while the record is bound to {@code actorId} and the partition's log epoch is still
     * {@code logEpoch}. Never creates a record; subscriptions, actor and wire version stay as they are. The
     * item is whether a record was updated.
     */
    Uni<Boolean> advanceClientCursor(
            String partition, String clientId, String actorId, String logEpoch, long cursor, long nowMs);

    // ---- realtime (§8.2) -------------------------------------------------------------------------

    /**
     * One whole commit of the log — every change of every table, with its stored scopes — or a {@code null}
     * item when it is not (or no longer) in the log. Read once per notified commit by each realtime pod.
     */
    Uni<StoredCommit> readCommit(String partition, long commitSeq);

    // ---- blob reference index (§5.9.4) -----------------------------------------------------------
    //
    // Maintained by PushTx#upsertRow / PushTx#deleteRow in the push transaction: an upserted row's entries are
    // replaced by its current non-NULL blob_ref values, a deleted row's entries are removed.

    /**
     * Rows of the partition that currently reference {@code blobId}, ordered by table then row id, after
     * {@code after}'s table and row id ({@code null} = from the first), at most {@code limit}.
     */
    Uni<List<BlobReference>> readBlobReferences(String partition, String blobId, BlobReference after, int limit);

    /** The subset of {@code blobIds} that at least one row of the partition references. */
    Uni<Set<String>> readReferencedBlobIds(String partition, Collection<String> blobIds);

    /**
     * Records that {@code actorId} uploaded {@code blobId} into the partition (§5.9.3: verified bytes, or an
     * upload grant for an absent blob) — what entitles it to reference the blob in a push (§5.9.6) before any
     * row it can read does. Idempotent.
     */
    Uni<Void> recordBlobUpload(String partition, String blobId, String actorId, long nowMs);

    /** The subset of {@code blobIds} that {@code actorId} uploaded into the partition ({@link #recordBlobUpload}). */
    Uni<Set<String>> readBlobsUploadedBy(String partition, String actorId, Collection<String> blobIds);

    /**
     * The partition's latest orphan-sweep mark ({@code 0} before any sweep). A push that checks blob existence
     * outside its transaction reads it first and asks {@link PushTx#blobsSweptSince} under the lock, so a sweep
     * that deleted a blob in between is noticed (§5.9.6).
     */
    Uni<Long> readBlobSweepMark(String partition);

    /**
     * The orphan sweep deleted the objects of {@code blobIds} it marked under {@code sweepMark}
     * ({@link PushTx#recordBlobSweep}): their marks are no longer pending and their upload records
     * ({@link #recordBlobUpload}) are gone. Outside any partition transaction.
     */
    Uni<Void> settleBlobSweep(String partition, long sweepMark, Collection<String> blobIds);

    /**
     * Forgets every partition's sweep marks recorded before {@code sweptBeforeMs}, pending or not (a pending one
     * left by a sweep that stopped between deleting and settling included); yields how many.
     */
    Uni<Long> forgetBlobSweeps(long sweptBeforeMs);

    // ---- pruning (§4.6) -------------------------------------------------------------------------

    /**
     * {@code pruneCommitsThrough}: under the partition lock, verifies {@code expectedLogEpoch}
     * ({@code sync.storage.log_epoch_mismatch} before any deletion) and advances horizonSeq to
     * {@code max(current, min(throughSeq, maxCommitSeq))}; then deletes commits, changes, scope-index entries and
     * tombstones with {@code commitSeq <= horizonSeq}. The storage may delete in bounded batches after the
     * horizon committed (never anything the committed horizon does not cover); a failure leaves the rest for
     * the next call, which always re-runs the deletion so earlier incomplete cleanup finishes. Never lowers the
     * horizon. Rows, push results and client records survive. Retention policy (active window, age limit,
     * newest 1000) is the caller's.
     */
    Uni<PruneResult> prune(String partition, String expectedLogEpoch, long throughSeq);

    /**
     * Deletes the partition's retained push results (§2.3) created before {@code createdBeforeMs}, in bounded
     * batches; yields how many. The retention rule is the caller's.
     */
    Uni<Long> prunePushResults(String partition, long createdBeforeMs);

    /**
     * §4.6 retention inputs of a page of partitions: those whose ids sort after {@code afterPartition} in byte order
     * ({@code null} = from the first), ordered by id, at most {@code limit}, each with the lowest cursor of its
     * clients active since {@code activeSinceMs} — aggregated by the storage, never by loading client records.
     */
    Uni<List<RetentionInputs>> retentionInputs(String afterPartition, int limit, long activeSinceMs);
}
