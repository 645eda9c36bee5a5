package dev.syncular.server.sync;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.schema.ColumnSchema;
import dev.syncular.server.schema.ScopePattern;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.wire.ColumnType;
import dev.syncular.server.wire.RowLayout;
import dev.syncular.server.wire.SparseRow;
import java.util.Arrays;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * Push-operation semantics of §6.2 with the §3.4 write-path authorization and the §5.10.3 crdt
 * interaction, as pure decisions over the stored state. Storage reads and writes stay with the caller.
 *
 * <p>{@code authorized} answers §3.4 steps 2–3 for an authorization row (full values, declaration order):
 * every declared scope variable's value must be present and allowed. {@code tombstoned} says the absent row has a
 * tombstone within the pruning horizon (§2.2, §4.6).
 */
public final class ConflictRules {
    private ConflictRules() {}

    public static WriteOutcome upsert(
            TableSchema table,
            SparseRow incoming,
            Long baseVersion,
            StoredRowState stored,
            boolean tombstoned,
            Predicate<Object[]> authorized,
            CrdtMerger merger) {
        int n = table.columnCount();
        if (stored == null) {
            return insert(table, incoming, baseVersion, tombstoned, authorized, merger);
        }
        // §6.2 step 1: authorize against the row as stored, never the payload (§3.4 step 2).
        if (!authorized.test(stored.values())) {
            return reject(ErrorCode.FORBIDDEN, "write denied by scope authorization");
        }
        // Step 2 (§3.4 rule 5): scope columns are immutable on update.
        for (ScopePattern p : table.scopePatterns()) {
            int i = p.columnIndex();
            if (incoming.isPresent(i) && !sameValue(incoming.value(i), stored.values()[i])) {
                return reject(ErrorCode.INVALID_REQUEST, "scope column changed on update");
            }
        }
        if (baseVersion != null) {
            // Step 3: a version the server never issued.
            if (baseVersion > stored.serverVersion()) {
                return reject(ErrorCode.INVALID_REQUEST, "baseVersion ahead of the server version");
            }
            byte[] marks = new byte[RowLayout.bitmapBytes(n)];
            boolean conflict = false;
            for (int i = 0; i < n; i++) {
                if (!incoming.isPresent(i) || i == table.primaryKeyIndex() || isCrdt(table, i)) {
                    continue;
                }
                // Step 4 marks every present non-crdt column; step 5 those moved past baseVersion.
                if (baseVersion == 0 || stored.columnVersions()[i] > baseVersion) {
                    marks[i >>> 3] |= (byte) (1 << (i & 7));
                    conflict = true;
                }
            }
            if (baseVersion == 0) {
                // Lost-insert race: the winner was authorized above (§6.2 step 4), so it may be disclosed.
                return new WriteOutcome.Conflict(stored.serverVersion(), stored.values(), marks);
            }
            if (conflict) {
                return new WriteOutcome.Conflict(stored.serverVersion(), stored.values(), marks);
            }
        }
        // Clean apply: write present non-crdt columns, merge present crdt columns, keep absent ones.
        long next = stored.serverVersion() + 1;
        Object[] values = stored.values().clone();
        long[] versions = stored.columnVersions().clone();
        for (int i = 0; i < n; i++) {
            if (!incoming.isPresent(i)) {
                continue;
            }
            if (isCrdt(table, i) && incoming.value(i) != null) {
                byte[] merged = merge(table.column(i), (byte[]) stored.values()[i], (byte[]) incoming.value(i), merger);
                if (merged == null) {
                    return reject(ErrorCode.CRDT_MERGE_FAILED, "crdt merge failed");
                }
                values[i] = merged;
            } else {
                values[i] = incoming.value(i);
            }
            if (i != table.primaryKeyIndex()) {
                versions[i] = next;
            }
        }
        return new WriteOutcome.Apply(values, next, versions, false);
    }

    /**
     * §6.2's table for an upsert against an absent row, in the SPEC's order. A payload with every column present
     * is an insert, whose §3.4 step 2 authorization row is the payload: it is authorized first, so a tombstone or
     * an absence is never disclosed to an actor without the scope. A partial payload names an update and can
     * never insert: it has no authorization row (like a delete of an absent row) and the table answers it, except
     * for {@code baseVersion > 0}, which the SPEC answers after payload authorization.
     *
     * <table>
     * <caption>§6.2 absent row</caption>
     * <tr><th>{@code baseVersion}</th><th>tombstone within the horizon</th><th>outcome</th></tr>
     * <tr><td>0</td><td>any</td><td>insert at version 1 (a partial payload: {@code sync.row_missing})</td></tr>
     * <tr><td>&gt; 0</td><td>any</td><td>{@code sync.row_missing} after payload authorization</td></tr>
     * <tr><td>absent</td><td>yes</td><td>{@code sync.row_deleted}</td></tr>
     * <tr><td>absent</td><td>no</td><td>insert when every column is present, else {@code sync.row_missing}</td></tr>
     * </table>
     */
    private static WriteOutcome insert(
            TableSchema table,
            SparseRow incoming,
            Long baseVersion,
            boolean tombstoned,
            Predicate<Object[]> authorized,
            CrdtMerger merger) {
        int n = table.columnCount();
        // §3.4 step 2: for an insert the authorization row is the pushed payload plus the primary key.
        Object[] payload = new Object[n];
        for (int i = 0; i < n; i++) {
            payload[i] = incoming.isPresent(i) ? incoming.value(i) : null;
        }
        boolean everyColumn = incoming.presentCount() == n;
        boolean versioned = baseVersion != null && baseVersion > 0;
        if ((everyColumn || versioned) && !authorized.test(payload)) {
            return reject(ErrorCode.FORBIDDEN, "write denied by scope authorization");
        }
        if (versioned) {
            return reject(ErrorCode.ROW_MISSING, "row does not exist");
        }
        if (baseVersion == null && tombstoned) {
            // a delete within the horizon beats a concurrent unversioned upsert
            return reject(ErrorCode.ROW_DELETED, "row was deleted");
        }
        if (!everyColumn) {
            // an insert needs every column: a partial payload names an update, and there is nothing to update
            return reject(ErrorCode.ROW_MISSING, "partial payload for an absent row");
        }
        Object[] values = payload.clone();
        for (int i = 0; i < n; i++) {
            if (isCrdt(table, i) && values[i] != null) {
                byte[] merged = merge(table.column(i), null, (byte[]) values[i], merger);
                if (merged == null) {
                    return reject(ErrorCode.CRDT_MERGE_FAILED, "crdt merge failed");
                }
                values[i] = merged;
            }
        }
        long[] versions = new long[n];
        Arrays.fill(versions, 1);
        return new WriteOutcome.Apply(values, 1, versions, true);
    }

    /** §6.2 delete: absent rows are an idempotent no-op; existing rows authorize against the stored row. */
    public static WriteOutcome delete(StoredRowState stored, Predicate<Object[]> authorized) {
        if (stored == null) {
            return new WriteOutcome.NoOp();
        }
        if (!authorized.test(stored.values())) {
            return reject(ErrorCode.FORBIDDEN, "write denied by scope authorization");
        }
        return new WriteOutcome.Delete(stored.values());
    }

    private static boolean isCrdt(TableSchema table, int i) {
        return table.column(i).type() == ColumnType.CRDT;
    }

    private static byte[] merge(ColumnSchema column, byte[] stored, byte[] incoming, CrdtMerger merger) {
        try {
            return merger.merge(column.crdtType(), stored, incoming);
        } catch (RuntimeException e) {
            return null;
        }
    }

    static boolean sameValue(Object a, Object b) {
        if (a instanceof byte[] x && b instanceof byte[] y) {
            return Arrays.equals(x, y);
        }
        return Objects.equals(a, b);
    }

    private static WriteOutcome reject(ErrorCode code, String message) {
        return new WriteOutcome.Reject(code, message);
    }
}
