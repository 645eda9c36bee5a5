package dev.syncular.server.sync;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.schema.ScopePattern;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.ChangeToWrite;
import dev.syncular.server.storage.PushTx;
import dev.syncular.server.storage.StorableText;
import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.storage.Tombstone;
import dev.syncular.server.wire.ColumnType;
import dev.syncular.server.wire.Op;
import dev.syncular.server.wire.OpResult;
import dev.syncular.server.wire.PushCommit;
import dev.syncular.server.wire.PushOperation;
import dev.syncular.server.wire.RowCodec;
import dev.syncular.server.wire.SparseRow;
import dev.syncular.server.wire.SparseRowCodec;
import dev.syncular.server.wire.WireException;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The operations of one commit, applied in order (§6.1, §6.3): each decoded in the client's row codec and
 * widened to the current schema (§9), authorized against the actor's allowed scopes (§3.4), decided by the
 * conflict rules (§6.2, §5.10.3 CRDT merges), its referenced blobs checked (§5.9.6 / §6.6), and staged over the
 * rows the commit already touched; the first terminating result stops the commit. A row id or text value the
 * storage cannot hold ({@link StorableText}) rejects the operation's commit with {@code sync.invalid_request},
 * like a payload failing the row codec (§1.7, §6.1: commit-level).
 */
final class PushOperations {
    private final SchemaWindow window;
    private final CrdtMerger merger;
    private final WritePolicy policy;
    private final RegisteredQueries queries;

    /** The row and value size caps ({@link RowSizeCap}). */
    private final SyncLimits limits;

    PushOperations(
            SchemaWindow window, CrdtMerger merger, WritePolicy policy, RegisteredQueries queries, SyncLimits limits) {
        this.window = window;
        this.limits = limits;
        this.merger = merger;
        this.policy = policy;
        this.queries = queries;
    }

    /** The §6.7 / §6.8 candidate-state reader of one push transaction over its (live) staged rows. */
    CandidateReader reader(PushTx tx, Map<String, Staged> staged) {
        return new TransactionCandidates(window.current(), tx, staged, queries);
    }

    /**
     * A staged row state inside one commit: the row, or {@code null} for a staged delete; the client
     * operation it came from (§6.11 attributes appended operations to it) and its present columns.
     */
    record Staged(String table, String rowId, StoredRow row, int opIndex, boolean[] present) {}

    /** A terminating error record and its optional §6.3.1 details. */
    record Rejection(OpResult result, String detailsJson) {}

    /**
     * Runs the operations in order; yields the terminating result record, or {@code null} when all applied.
     * {@code evidence}, when not null, collects every operation's §6.8 evidence (for whole-commit validators and
     * reaction planners).
     */
    Uni<Rejection> applyOps(
            RoundState round,
            PushTx tx,
            PushCommit commit,
            Optional<Map<String, List<String>>> allowed,
            int index,
            Map<String, Staged> staged,
            Map<String, Optional<StoredRow>> fetched,
            List<ChangeToWrite> changes,
            List<OpResult> results,
            List<OperationEvidence> evidence) {
        // Iterative (not recursive) so a 500-operation commit never grows the stack; stops at the first
        // terminating result (§6.3: operations after it are never attempted).
        boolean[] stopped = new boolean[1];
        return Multi.createFrom()
                .range(index, commit.operations().size())
                .onItem()
                .transformToUniAndConcatenate(i -> stopped[0]
                        ? Uni.createFrom().<Rejection>nullItem()
                        : applyOne(round, tx, commit, allowed, i, staged, fetched, changes, results, evidence)
                                .invoke(r -> stopped[0] = r != null))
                .collect()
                .first();
    }

    private Uni<Rejection> applyOne(
            RoundState round,
            PushTx tx,
            PushCommit commit,
            Optional<Map<String, List<String>>> allowed,
            int index,
            Map<String, Staged> staged,
            Map<String, Optional<StoredRow>> fetched,
            List<ChangeToWrite> changes,
            List<OpResult> results,
            List<OperationEvidence> evidence) {
        PushOperation op = commit.operations().get(index);
        CompiledSchema current = window.current();
        TableSchema table = current.table(op.table());
        TableSchema clientTable = round.clientSchema.table(op.table());
        if (table == null || clientTable == null) {
            return error(index, ErrorCode.UNKNOWN_TABLE, "push operation names an unknown table");
        }
        if (!StorableText.storableKey(op.rowId())) {
            // §1.7 commit-level, checked before the row is read: the storage cannot key on this id
            return error(index, ErrorCode.INVALID_REQUEST, "rowId holds U+0000 or exceeds the length limit");
        }
        SparseRow incoming = null;
        if (op.op() == Op.UPSERT) {
            Rejection rowTooLarge = RowSizeCap.checkPayload(index, table, op.payload().length, limits);
            if (rowTooLarge != null) {
                return Uni.createFrom().item(rowTooLarge); // before the row is decoded: no copy of it is made
            }
            try {
                incoming = ClientRows.widen(
                        new SparseRowCodec(clientTable.rowLayout()).decode(op.payload()), table.columnCount());
            } catch (WireException e) {
                return error(index, ErrorCode.INVALID_REQUEST, "payload fails the row codec");
            }
            if (!storable(table, incoming)) {
                return error(index, ErrorCode.INVALID_REQUEST, "payload holds text the storage cannot hold");
            }
            Rejection tooLarge = RowSizeCap.checkValues(index, table, incoming, limits);
            if (tooLarge != null) {
                return Uni.createFrom().item(tooLarge);
            }
            Object pk = incoming.value(table.primaryKeyIndex());
            if (pk == null || !table.primaryKeyColumn().type().rowIdOf(pk).equals(op.rowId())) {
                return error(index, ErrorCode.INVALID_REQUEST, "payload primary key differs from rowId");
            }
        }
        SparseRow row = incoming;
        String key = op.table() + '\u0000' + op.rowId();
        return current(tx, staged, fetched, table.name(), op.rowId(), key).flatMap(stored -> {
            Map<String, List<String>> grant = allowed.orElse(null);
            Predicate<Object[]> authorized =
                    values -> grant != null && EffectiveScopes.authorizesRow(table, values, grant);
            if (op.op() == Op.DELETE) {
                WriteOutcome outcome = ConflictRules.delete(stored.row == null ? null : state(stored.row), authorized);
                return onOutcome(
                        round, tx, index, staged, changes, results, evidence, table, op, key, outcome, stored, null);
            }
            Uni<Boolean> tombstoned = stored.row != null
                    ? Uni.createFrom().item(false)
                    : stored.stagedDelete
                            ? Uni.createFrom().item(true)
                            : tx.readTombstone(table.name(), op.rowId()).map(t -> withinHorizon(tx, t));
            // §9: an older client's insert is its whole row, the columns appended since null; its update leaves
            // them absent (untouched).
            SparseRow written = stored.row == null ? ClientRows.nullAppended(row, clientTable.columnCount()) : row;
            return tombstoned
                    .flatMap(tomb -> decide(
                            table,
                            written,
                            () -> ConflictRules.upsert(
                                    table,
                                    written,
                                    op.baseVersion(),
                                    stored.row == null ? null : state(stored.row),
                                    tomb,
                                    authorized,
                                    merger)))
                    .flatMap(outcome -> {
                        if (outcome instanceof WriteOutcome.Apply && round.blobs.missingAny(table, written)) {
                            // §5.9.6 / §6.6: after the §3.4 check on the same authorization row
                            return error(index, ErrorCode.BLOB_NOT_FOUND, "referenced blob is not in the blob store");
                        }
                        return onOutcome(
                                round,
                                tx,
                                index,
                                staged,
                                changes,
                                results,
                                evidence,
                                table,
                                op,
                                key,
                                outcome,
                                stored,
                                written.present());
                    });
        });
    }

    /**
     * The §6.2 decision; when the operation presents a {@code crdt} column its §5.10.3 merge (CPU work that grows
     * with the stored document) runs on a worker thread, never on the event loop.
     */
    private static Uni<WriteOutcome> decide(TableSchema table, SparseRow row, Supplier<WriteOutcome> rules) {
        for (int i = 0; i < table.columnCount(); i++) {
            if (row.isPresent(i) && table.column(i).type() == ColumnType.CRDT) {
                return Uni.createFrom().item(rules).runSubscriptionOn(Infrastructure.getDefaultWorkerPool());
            }
        }
        return Uni.createFrom().item(rules.get());
    }

    private Uni<Rejection> onOutcome(
            RoundState round,
            PushTx tx,
            int index,
            Map<String, Staged> staged,
            List<ChangeToWrite> changes,
            List<OpResult> results,
            List<OperationEvidence> evidence,
            TableSchema table,
            PushOperation op,
            String key,
            WriteOutcome outcome,
            Current stored,
            boolean[] presence) {
        if (outcome instanceof WriteOutcome.Reject r) {
            return error(index, r.code(), r.message());
        }
        if (outcome instanceof WriteOutcome.Conflict c) {
            TableSchema clientTable = round.clientSchema.table(table.name());
            byte[] serverRow = new RowCodec(clientTable.rowLayout())
                    .encode(ClientRows.narrow(c.serverRow(), clientTable.columnCount()));
            return Uni.createFrom()
                    .item(new Rejection(
                            new OpResult.Conflict(
                                    index,
                                    ErrorCode.VERSION_CONFLICT.code,
                                    "present columns moved past baseVersion",
                                    c.serverVersion(),
                                    serverRow,
                                    ClientRows.narrowBitmap(c.conflictColumns(), clientTable.columnCount())),
                            null));
        }
        Runnable stage;
        if (outcome instanceof WriteOutcome.Apply a) {
            Map<String, String> scopes = EffectiveScopes.storedScopes(table, a.values());
            if (scopes.size() != table.scopePatterns().size()) {
                return error(index, ErrorCode.MISSING_SCOPES, "change without stored scopes");
            }
            stage = () -> {
                staged.put(
                        key,
                        new Staged(
                                table.name(),
                                op.rowId(),
                                new StoredRow(op.rowId(), a.serverVersion(), a.values(), a.columnVersions(), scopes),
                                index,
                                presence));
                changes.add(ChangeToWrite.upsert(table.name(), op.rowId(), a.serverVersion(), scopes, a.values()));
            };
        } else if (outcome instanceof WriteOutcome.Delete d) {
            stage = () -> {
                staged.put(key, new Staged(table.name(), op.rowId(), null, index, null));
                changes.add(ChangeToWrite.delete(
                        table.name(), op.rowId(), EffectiveScopes.storedScopes(table, d.storedValues())));
            };
        } else {
            stage = () -> {}; // §6.2: deleting an absent row stages nothing
        }
        List<RowValidator> validators = policy.rowValidators(table.name());
        if (validators.isEmpty() && evidence == null) {
            stage.run();
            results.add(new OpResult.Applied(index));
            return Uni.createFrom().nullItem();
        }
        OperationEvidence e = evidence(table, op, index, outcome, stored.row);
        if (evidence != null) {
            evidence.add(e);
        }
        // §6.7: decode → scope authorization → validation → write; a delete of an absent row runs no validator
        Uni<Void> validated = outcome instanceof WriteOutcome.NoOp
                ? Uni.createFrom().voidItem()
                : RowValidation.run(validators, round.ctx.actorId(), round.ctx.partition(), e, reader(tx, staged));
        return validated
                .onItem()
                .transform(v -> {
                    stage.run();
                    results.add(new OpResult.Applied(index));
                    return (Rejection) null;
                })
                .onFailure(f -> !(f instanceof SyncError))
                .recoverWithItem(f -> RowValidation.rejection(index, f, RowValidation.ROW_VALIDATOR_FAILED));
    }

    /** The §6.7 / §6.8 evidence of one decided operation. */
    private static OperationEvidence evidence(
            TableSchema table, PushOperation op, int index, WriteOutcome outcome, StoredRow stored) {
        Map<String, Object> storedRow = stored == null ? null : RowValidation.byName(table, stored.values());
        Long storedVersion = stored == null ? null : stored.serverVersion();
        if (outcome instanceof WriteOutcome.Apply a) {
            return new OperationEvidence(
                    index,
                    OperationEvidence.UPSERT,
                    table.name(),
                    op.rowId(),
                    RowValidation.byName(table, a.values()),
                    storedRow,
                    storedVersion,
                    a.serverVersion());
        }
        return new OperationEvidence(
                index, OperationEvidence.DELETE, table.name(), op.rowId(), null, storedRow, storedVersion, null);
    }

    /**
     * Whether the storage can hold the row's text ({@link StorableText}): no value holds U+0000, and a scope
     * column's value — part of the §3.1 scope-key indexes — is a storable key.
     */
    private static boolean storable(TableSchema table, SparseRow row) {
        for (int i = 0; i < row.present().length; i++) {
            if (row.isPresent(i) && row.value(i) instanceof String text && !StorableText.storable(text)) {
                return false;
            }
        }
        for (ScopePattern p : table.scopePatterns()) {
            Object v = row.isPresent(p.columnIndex()) ? row.value(p.columnIndex()) : null;
            if (v != null && !StorableText.storableKey(EffectiveScopes.scopeValue(v))) {
                return false;
            }
        }
        return true;
    }

    private static Uni<Rejection> error(int index, ErrorCode code, String message) {
        return Uni.createFrom()
                .item(new Rejection(new OpResult.Error(index, code.code, message, code.retryable), null));
    }

    /** The row a push operation sees: staged earlier in the commit, else as stored. */
    private record Current(StoredRow row, boolean stagedDelete) {}

    private static Uni<Current> current(
            PushTx tx,
            Map<String, Staged> staged,
            Map<String, Optional<StoredRow>> fetched,
            String table,
            String rowId,
            String key) {
        Staged s = staged.get(key);
        if (s != null) {
            return Uni.createFrom().item(new Current(s.row(), s.row() == null));
        }
        Optional<StoredRow> f = fetched.get(key);
        if (f != null) {
            return Uni.createFrom().item(new Current(f.orElse(null), false));
        }
        return tx.readRows(table, List.of(rowId)).map(rows -> new Current(rows.get(rowId), false));
    }

    /**
     * §6.2 / §4.6: a tombstone counts only within the horizon. Pruning advances {@code horizonSeq} before it deletes
     * the log and tombstones at or below it, so one at or below the horizon (the partition state this transaction
     * locked) is already gone as far as delete precedence is concerned, deleted yet or not.
     */
    private static boolean withinHorizon(PushTx tx, Tombstone t) {
        return t != null && t.commitSeq() > tx.state().horizonSeq();
    }

    private static StoredRowState state(StoredRow row) {
        return new StoredRowState(row.values(), row.serverVersion(), row.columnVersions());
    }
}
