package dev.syncular.server.storage.postgres;

import static dev.syncular.server.storage.postgres.PgSql.first;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.ChangeToWrite;
import dev.syncular.server.storage.ColumnVersions;
import dev.syncular.server.storage.PartitionState;
import dev.syncular.server.storage.PlannedReaction;
import dev.syncular.server.storage.PushOutcome;
import dev.syncular.server.storage.PushTx;
import dev.syncular.server.storage.QueryRows;
import dev.syncular.server.storage.RecentCommits;
import dev.syncular.server.storage.ServeGate;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.StoredChange;
import dev.syncular.server.storage.StoredCommit;
import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.storage.Tombstone;
import dev.syncular.server.wire.CanonicalJson;
import dev.syncular.server.wire.Op;
import io.smallrye.mutiny.Uni;
import io.vertx.core.buffer.Buffer;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;
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
 * held back until its idempotency record can join its statement ({@link Context#appendCommitWithResult}).
 */
final class PushTransaction implements PushTx {

    /**
     * The §8.2 commit notification channel of a storage schema: {@code syncular_commits_} and the schema name
     * lower-cased with every character outside {@code [a-z0-9_]} replaced, cut to PostgreSQL's 63-byte
     * identifier limit.
     */
    static String notificationChannel(String pgSchema) {
        String name = "syncular_commits_" + pgSchema.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9_]", "_");
        return name.length() > 63 ? name.substring(0, 63) : name;
    }

    /**
     * What every partition transaction of one storage shares: the statement texts of the push writes, built
     * once (the pool's prepared-statement cache is keyed by the text), and the stores the transaction reads
     * and writes through.
     */
    static final class Context {
        /**
         * A commit's log writes in one statement (§2.1, §2.2): the {@code sync_commits} row ({@code $1..$9};
         * its {@code BEFORE INSERT} writer-fence trigger fires as for a plain insert and fails the whole
         * statement), its changes from parallel arrays ({@code $10..$16}: change index, table, row id, op,
         * row version, scopes JSON text, payload), its scope-index keys ({@code $17} tables, {@code $18} keys)
         * and the partition's {@code max_commit_seq}. Data-modifying CTEs run to completion whether or not the
         * main query reads them, and all of them or none take effect.
         */
        final String appendCommit;
        /**
         * {@link #appendCommit} plus the commit's idempotency record ({@code $19..$24}: client id, client commit
         * id, status, commit seq, result, created at). A key that already holds a result fails the statement
         * (a unique violation, {@link PushResults#duplicate}), which aborts the transaction: a {@code COMMIT}
         * pipelined behind it rolls back instead of keeping the rest of the commit.
         */
        final String appendCommitWithResult;

        final String readTombstone;
        final String deleteRowScopes;
        final String insertRowScopes;
        final String deleteTombstone;
        final String upsertTombstone;
        /** §6.7 queryAuthoritative: {@code SELECT sync_guarded_query($1, $2)} ({@link #queryRows}). */
        final String guardedQuery;
        /** §6.9: a commit's reactions ({@link PostgresReactionStore#appendSql}). */
        final String appendReactions;

        final InstalledSchema installed;
        final ServeGateReads gates;
        final CheckpointStore checkpoints;
        final ProjectionRows rows;
        final PushResults results;
        final BlobReferenceIndex blobs;
        /** Reads of partition transactions answered from a group's read-ahead (see {@link PushReadAhead}). */
        final LongAdder readAheadAnswers = new LongAdder();
        /** Told every commit of a committed group ({@link PushQueue}); {@link RecentCommits#OFF} when off. */
        final RecentCommits recent;

        Context(
                String pgSchema,
                InstalledSchema installed,
                ServeGateReads gates,
                CheckpointStore checkpoints,
                ProjectionRows rows,
                PushResults results,
                BlobReferenceIndex blobs,
                RecentCommits recent) {
            this.installed = installed;
            this.recent = recent;
            this.gates = gates;
            this.checkpoints = checkpoints;
            this.rows = rows;
            this.results = results;
            this.blobs = blobs;
            String rowScopes = PgSql.qualified(pgSchema, "sync_row_scopes");
            String tombstones = PgSql.qualified(pgSchema, "sync_tombstones");
            appendCommit = appendCommitSql(pgSchema, false);
            appendCommitWithResult = appendCommitSql(pgSchema, true);
            readTombstone =
                    "SELECT commit_seq FROM " + tombstones + " WHERE partition_id = $1 AND tbl = $2 AND row_id = $3";
            deleteRowScopes = "DELETE FROM " + rowScopes + " WHERE partition_id = $1 AND tbl = $2 AND row_id = $3";
            insertRowScopes = "INSERT INTO " + rowScopes + " (partition_id, tbl, scope_key, row_id)"
                    + " SELECT $1, $2, k, $3 FROM unnest($4::text[]) AS u(k) ON CONFLICT DO NOTHING";
            appendReactions = PostgresReactionStore.appendSql(pgSchema);
            guardedQuery = "SELECT " + PgSql.qualified(pgSchema, StorageSchemaMigration.GUARDED_QUERY) + "($1, $2)";
            deleteTombstone = "DELETE FROM " + tombstones + " WHERE partition_id = $1 AND tbl = $2 AND row_id = $3";
            upsertTombstone = "INSERT INTO " + tombstones + " (partition_id, tbl, row_id, commit_seq)"
                    + " VALUES ($1, $2, $3, $4) ON CONFLICT (partition_id, tbl, row_id) DO UPDATE SET commit_seq = EXCLUDED.commit_seq";
        }

        /**
         * See {@link #appendCommit} and {@link #appendCommitWithResult}. Both also announce the commit on
         * {@link #notificationChannel} — inside the same statement, so the push path gains no statement and no
         * round trip.
         */
        private static String appendCommitSql(String pgSchema, boolean withResult) {
            return "WITH c AS (INSERT INTO " + PgSql.qualified(pgSchema, "sync_commits")
                    + " (partition_id, commit_seq, created_at_ms, actor_id,"
                    + " client_id, client_commit_id, change_count, tables, writer_version)"
                    + " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)),"
                    + " ch AS (INSERT INTO " + PgSql.qualified(pgSchema, "sync_changes")
                    + " (partition_id, commit_seq, change_index, tbl, row_id, op,"
                    + " row_version, scopes, payload) SELECT $1, $2, u.i, u.t, u.r, u.o, u.v, u.s::jsonb, u.p"
                    + " FROM unnest($10::integer[], $11::text[], $12::text[], $13::integer[], $14::bigint[], $15::text[],"
                    + " $16::bytea[]) AS u(i, t, r, o, v, s, p)),"
                    + " sc AS (INSERT INTO " + PgSql.qualified(pgSchema, "sync_commit_scopes")
                    + " (partition_id, tbl, scope_key, commit_seq)"
                    + " SELECT $1, u.t, u.k, $2 FROM unnest($17::text[], $18::text[]) AS u(t, k) ON CONFLICT DO NOTHING),"
                    + " mx AS (UPDATE " + PgSql.qualified(pgSchema, "sync_partitions")
                    + " SET max_commit_seq = $2 WHERE partition_id = $1),"
                    // §8.2: the commit announced to every pod's LISTEN connection, delivered only if (and when) the
                    // transaction commits; a plain CTE runs only when read, hence the main query reads it.
                    + " nt AS (SELECT pg_notify('" + notificationChannel(pgSchema)
                    + "', $1::text || ':' || $2::bigint::text))"
                    + (withResult
                            ? ", pr AS (INSERT INTO " + PgSql.qualified(pgSchema, "sync_push_results")
                                    + " (partition_id, client_id, client_commit_id,"
                                    + " status, commit_seq, result, created_at_ms) VALUES ($1, $19, $20, $21, $22, $23, $24))"
                            : "")
                    + " SELECT 1 FROM nt";
        }
    }

    /** An {@link PushTx#appendCommit} statement not sent yet and the writes issued after it; see {@link #held}. */
    private static final class HeldAppend {
        final Tuple args;
        final int writerVersion;
        final List<Uni<?>> after = new ArrayList<>();

        HeldAppend(Tuple args, int writerVersion) {
            this.args = args;
            this.writerVersion = writerVersion;
        }
    }

    private final Context x;
    private final SqlConnection conn;
    private final PartitionState locked;
    /** What the group's works wrote so far (this one included). */
    private final PushReadAhead.GroupWrites writes;
    /** This work's read-ahead, or null. */
    private final PushReadAhead.PreRead pre;

    long maxCommitSeq;
    /**
     * The commits this work appended and has not rolled back, whole and decoded from the payloads written, for
     * {@link Context#recent} once the group commits; empty when that is off.
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
     * statement ({@link Context#appendCommitWithResult}). Released, in issue order, by {@link #savePushResult}
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
            Context x,
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
            String actorId, String clientId, String clientCommitId, long createdAtMs, List<ChangeToWrite> changes) {
        long seq = maxCommitSeq + 1;
        CompiledSchema writer = x.installed.schema();
        if (writer == null) {
            return Uni.createFrom()
                    .failure(new StorageException(
                            StorageException.INVALID_ARGUMENT, "ensureSchema has not completed", Map.of()));
        }
        int writerVersion = writer.version();
        int n = changes.size();
        Integer[] indexes = new Integer[n];
        String[] tables = new String[n];
        String[] rowIds = new String[n];
        Integer[] ops = new Integer[n];
        Long[] rowVersions = new Long[n];
        String[] scopes = new String[n];
        Buffer[] payloads = new Buffer[n];
        List<String> scopeTables = new ArrayList<>();
        List<String> scopeKeys = new ArrayList<>();
        Set<String> commitTables = new LinkedHashSet<>();
        try {
            for (int i = 0; i < n; i++) {
                ChangeToWrite ch = changes.get(i);
                RowTable rt = x.installed.table(ch.table());
                if (ch.scopes() == null) {
                    throw new StorageException(
                            StorageException.MISSING_SCOPES,
                            "change has no stored scopes",
                            Map.of("table", ch.table()));
                }
                commitTables.add(ch.table());
                for (String key : rt.scopeKeys(ch.scopes())) {
                    scopeTables.add(ch.table());
                    scopeKeys.add(key);
                }
                byte[] payload = ch.op() == Op.UPSERT ? rt.encodePayload(ch.row()) : null;
                indexes[i] = i;
                tables[i] = ch.table();
                rowIds[i] = ch.rowId();
                ops[i] = ch.op().code;
                rowVersions[i] = ch.rowVersion();
                scopes[i] = StoredScopes.scopesJson(ch.scopes());
                payloads[i] = payload == null ? null : Buffer.buffer(payload);
            }
        } catch (RuntimeException e) {
            return Uni.createFrom().failure(e);
        }
        Tuple args = Tuple.tuple()
                .addValue(partition())
                .addValue(seq)
                .addValue(createdAtMs)
                .addValue(actorId)
                .addValue(clientId)
                .addValue(clientCommitId)
                .addValue(n)
                .addArrayOfString(commitTables.toArray(String[]::new))
                .addValue((long) writerVersion)
                .addArrayOfInteger(indexes)
                .addArrayOfString(tables)
                .addArrayOfString(rowIds)
                .addArrayOfInteger(ops)
                .addArrayOfLong(rowVersions)
                .addArrayOfString(scopes)
                .addValue(payloads)
                .addArrayOfString(scopeTables.toArray(String[]::new))
                .addArrayOfString(scopeKeys.toArray(String[]::new));
        // one statement, held until the idempotency record can join it (see #held)
        release(null);
        gate = null;
        gateRead = null;
        held = new HeldAppend(args, writerVersion);
        maxCommitSeq = seq;
        if (x.recent.enabled()) {
            List<StoredChange> whole = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                ChangeToWrite ch = changes.get(i);
                whole.add(new StoredChange(
                        ch.table(),
                        ch.rowId(),
                        ch.op(),
                        ch.rowVersion(),
                        StoredScopes.parseScopes(scopes[i]),
                        payloads[i] == null
                                ? null
                                : x.installed.table(ch.table()).decodePayload(payloads[i].getBytes())));
            }
            appended.add(new StoredCommit(seq, createdAtMs, actorId, clientId, clientCommitId, whole));
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
            args = Tuple.tuple();
            for (int i = 0; i < ts.columnCount(); i++) {
                args.addValue(ProjectionRows.bindValue(ts.column(i).type(), values[i]));
            }
            args.addValue(partition())
                    .addValue(row.rowId())
                    .addValue(row.serverVersion())
                    .addValue(StoredScopes.scopesJson(row.scopes()))
                    .addValue(Buffer.buffer(ColumnVersions.encode(row.columnVersions())));
            upsert = rt.upsertSql;
        } catch (RuntimeException e) {
            return Uni.createFrom().failure(e);
        }
        writes.rows.add(PushReadAhead.rowKey(table, row.rowId()));
        // a declared unique index refusing the row fails this work with sync.storage.unique_violation
        // (UniqueIndexes); pipelined, it surfaces where the work's writes are awaited
        RowTable written = rt;
        send(conn.preparedQuery(upsert)
                .execute(args)
                .onFailure()
                .transform(e -> UniqueIndexes.refusal(e, written, row.rowId())));
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
        int n = reactions.size();
        String[] keys = new String[n];
        String[] types = new String[n];
        Integer[] versions = new Integer[n];
        String[] payloads = new String[n];
        String[] idempotencyKeys = new String[n];
        Integer[] maxAttempts = new Integer[n];
        for (int i = 0; i < n; i++) {
            PlannedReaction r = reactions.get(i);
            keys[i] = r.key();
            types[i] = r.type();
            versions[i] = r.version();
            payloads[i] = r.payloadJson();
            // §6.9: the stable JSON encoding of [partition, clientId, clientCommitId, key]
            idempotencyKeys[i] = CanonicalJson.write(List.of(partition(), clientId, clientCommitId, r.key()));
            maxAttempts[i] = r.maxAttempts();
        }
        send(conn.preparedQuery(x.appendReactions)
                .execute(Tuple.tuple()
                        .addValue(partition())
                        .addValue(clientId)
                        .addValue(clientCommitId)
                        .addValue(commitSeq)
                        .addValue(nowMs)
                        .addArrayOfString(keys)
                        .addArrayOfString(types)
                        .addArrayOfInteger(versions)
                        .addArrayOfString(payloads)
                        .addArrayOfString(idempotencyKeys)
                        .addArrayOfInteger(maxAttempts)));
        return Uni.createFrom().voidItem();
    }

    @Override
    public Uni<Void> savePushResult(String clientId, String clientCommitId, PushOutcome outcome) {
        // pipelined with the commit's other writes; a duplicate key fails the statement and aborts the transaction
        writes.keys.add(PushReadAhead.pushKey(clientId, clientCommitId));
        Tuple result = Tuple.tuple()
                .addValue(clientId)
                .addValue(clientCommitId)
                .addValue(outcome.status().code)
                .addValue(outcome.commitSeq())
                .addValue(Buffer.buffer(outcome.result()))
                .addValue(outcome.createdAtMs());
        if (held != null) {
            // the applied commit's record: one statement with the commit's log writes
            gate = null;
            gateRead = null;
            release(result);
            return Uni.createFrom().voidItem();
        }
        send(conn.preparedQuery(x.results.insertPushResult)
                .execute(Tuple.of(partition())
                        .addValue(result.getValue(0))
                        .addValue(result.getValue(1))
                        .addValue(result.getValue(2))
                        .addValue(result.getValue(3))
                        .addValue(result.getValue(4))
                        .addValue(result.getValue(5)))
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
