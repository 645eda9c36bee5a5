package dev.syncular.server.sync;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.ScopePattern;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.PushTx;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.sync.PushOperations.Staged;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The §6.8 candidate-state reader of one push transaction: stored rows read on the transaction's connection,
 * with the rows the commit staged (upserts and deletes, including §6.11 cascades) laid over them.
 */
final class TransactionCandidates implements CandidateReader {
    static final int MAX_SCAN = 1000;
    private final CompiledSchema schema;
    private final PushTx tx;
    private final Map<String, Staged> staged;
    private final RegisteredQueries queries;

    /** {@code staged} is read live: a row validator's reader sees the operations staged before its own. */
    TransactionCandidates(CompiledSchema schema, PushTx tx, Map<String, Staged> staged, RegisteredQueries queries) {
        this.schema = schema;
        this.tx = tx;
        this.staged = staged;
        this.queries = queries;
    }

    /**
     * §6.7 "runs the statement on the push transaction's own connection. The validator therefore reads the
     * transaction's snapshot, including every operation staged before this one": the commit writes its rows only
     * after it is appended, so the staged rows of the query's tables are written first, under a savepoint rolled
     * back after the read (the statement, failing or not, leaves the transaction as it was).
     */
    @Override
    public Uni<List<Map<String, Object>>> queryAuthoritative(String operation, Map<String, Object> params) {
        return Uni.createFrom()
                .deferred(() -> queries.query(
                        operation,
                        params == null ? Map.of() : params,
                        (tables, sql, binds) ->
                                tx.rolledBack(() -> writeStaged(tables).chain(() -> tx.queryRows(sql, binds)))));
    }

    /** The staged rows of {@code tables}, in staging order, written into the transaction (iterative). */
    private Uni<Void> writeStaged(List<String> tables) {
        List<Staged> rows = new ArrayList<>();
        for (Staged s : staged.values()) {
            if (tables.contains(s.table())) {
                rows.add(s);
            }
        }
        if (rows.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        long placeholderSeq = tx.state().maxCommitSeq() + 1; // a tombstone's seq; rolled back with the rest
        return Multi.createFrom()
                .iterable(rows)
                .onItem()
                .transformToUniAndConcatenate(s -> s.row() == null
                        ? tx.deleteRow(s.table(), s.rowId(), placeholderSeq)
                        : tx.upsertRow(s.table(), s.row()))
                .collect()
                .last()
                .replaceWithVoid();
    }

    @Override
    public Uni<CandidateRow> getRow(String table, String rowId) {
        TableSchema t = table(table);
        Staged s = staged.get(table + '\u0000' + rowId);
        if (s != null) {
            return Uni.createFrom().item(s.row() == null ? null : candidate(t, s.row()));
        }
        return tx.readRows(table, List.of(rowId)).map(rows -> {
            StoredRow r = rows.get(rowId);
            return r == null ? null : candidate(t, r);
        });
    }

    /**
     * §6.8 {@code scanRows}. The filter's values are scope values, text (§3.1, §3.2): a row matches when its stored
     * scopes, as {@link EffectiveScopes#storedScopes} renders its values, hold each of them. Stored rows are read on
     * the first variable's column, its text turned into a value of the column's type
     * ({@link EffectiveScopes#columnValue}); a text that is the scope value of no value of its column's type
     * ({@code "2.0"} or {@code "abc"} for a {@code float}, {@code "yes"} for a {@code boolean}, {@code "07"} for an
     * {@code integer}) is held by no row, staged or stored, so the scan is empty — as for any scope value no row
     * holds; §6.8 fails loudly only for an empty filter, unknown tables and invalid bounds. A variable the table
     * does not declare, or a {@code null} value, fails with {@code sync.storage.invalid_argument} whichever
     * position it has in the filter.
     */
    @Override
    public Uni<List<CandidateRow>> scanRows(
            String table, Map<String, String> scopeFilter, String afterRowId, int limit) {
        TableSchema t = table(table);
        if (scopeFilter == null || scopeFilter.isEmpty()) {
            throw new StorageException(
                    "sync.storage.scan_requires_scope", "a candidate scan needs a scope filter", Map.of());
        }
        if (limit < 1 || limit > MAX_SCAN) {
            throw new StorageException(StorageException.INVALID_ARGUMENT, "scan limit must be 1-1000", Map.of());
        }
        ScopePattern first = null;
        Object value = null;
        boolean held = true;
        for (Map.Entry<String, String> e : scopeFilter.entrySet()) {
            ScopePattern p = pattern(t, e.getKey());
            if (e.getValue() == null) {
                throw new StorageException(
                        StorageException.INVALID_ARGUMENT,
                        "scope filter value is null",
                        Map.of("table", table, "variable", e.getKey()));
            }
            Optional<Object> v =
                    EffectiveScopes.columnValue(t.column(p.columnIndex()).type(), e.getValue());
            if (v.isEmpty()) {
                held = false;
            } else if (first == null) {
                first = p;
                value = v.get();
            }
        }
        if (!held) {
            return Uni.createFrom().item(List.of());
        }
        // Stored rows by keyset pages on the first variable's column, merged with the staged rows, until full.
        TreeMap<String, CandidateRow> out = new TreeMap<>(TransactionCandidates::byBytes);
        for (Staged s : staged.values()) {
            if (s.table().equals(table)
                    && s.row() != null
                    && after(s.rowId(), afterRowId)
                    && matches(t, s.row().values(), scopeFilter)) {
                out.put(s.rowId(), candidate(t, s.row()));
            }
        }
        return page(t, first.column(), value, scopeFilter, afterRowId, limit, out)
                .map(v -> new ArrayList<>(out.values()).subList(0, Math.min(limit, out.size())));
    }

    private static ScopePattern pattern(TableSchema t, String variable) {
        for (ScopePattern p : t.scopePatterns()) {
            if (p.variable().equals(variable)) {
                return p;
            }
        }
        throw new StorageException(
                StorageException.INVALID_ARGUMENT,
                "undeclared scope variable",
                Map.of("table", t.name(), "variable", String.valueOf(variable)));
    }

    /** Adds stored rows (unless staged) page by page until {@code limit} rows precede the last page's end. */
    private Uni<Void> page(
            TableSchema t,
            String column,
            Object value,
            Map<String, String> filter,
            String after,
            int limit,
            TreeMap<String, CandidateRow> out) {
        return tx.readRowsWhere(t.name(), column, value, after, limit).flatMap(rows -> {
            for (StoredRow r : rows) {
                if (!staged.containsKey(t.name() + '\u0000' + r.rowId()) && matches(t, r.values(), filter)) {
                    out.put(r.rowId(), candidate(t, r));
                }
            }
            if (rows.size() < limit) {
                return Uni.createFrom().voidItem();
            }
            String last = rows.get(rows.size() - 1).rowId();
            if (out.headMap(last, true).size() >= limit) {
                return Uni.createFrom().voidItem();
            }
            return page(t, column, value, filter, last, limit, out);
        });
    }

    private TableSchema table(String table) {
        TableSchema t = schema.table(table);
        if (t == null) {
            throw new StorageException(StorageException.INVALID_ARGUMENT, "unknown table", Map.of("table", table));
        }
        return t;
    }

    private static boolean matches(TableSchema t, Object[] values, Map<String, String> filter) {
        Map<String, String> scopes = EffectiveScopes.storedScopes(t, values);
        for (Map.Entry<String, String> e : filter.entrySet()) {
            if (!e.getValue().equals(scopes.get(e.getKey()))) {
                return false;
            }
        }
        return true;
    }

    private static boolean after(String rowId, String afterRowId) {
        return afterRowId == null || byBytes(rowId, afterRowId) > 0;
    }

    /** Row ids order by their UTF-8 bytes, as the storage's {@code COLLATE "C"} keyset does. */
    private static int byBytes(String a, String b) {
        return Arrays.compareUnsigned(a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8));
    }

    private static CandidateRow candidate(TableSchema t, StoredRow r) {
        return new CandidateRow(t.name(), r.rowId(), r.serverVersion(), RowValidation.byName(t, r.values()));
    }
}
