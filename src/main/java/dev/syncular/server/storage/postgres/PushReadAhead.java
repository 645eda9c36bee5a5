package dev.syncular.server.storage.postgres;

import static dev.syncular.server.storage.postgres.PgSql.first;

import dev.syncular.server.storage.PushOutcome;
import dev.syncular.server.storage.PushReadHint;
import dev.syncular.server.storage.PushTx;
import dev.syncular.server.storage.StoredRow;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The read-ahead of a group (§6.3: each push's idempotency key is checked under the partition lock). Works
 * whose hints are pairwise disjoint from every other hinted work's (no shared idempotency key, no shared
 * row) get a {@link PreRead}: one statement for all their keys and one per table for all their rows, sent
 * pipelined right behind {@code BEGIN}, the lock and the gate read — the group's first round trip. Works
 * with overlapping hints or none read as without a read-ahead.
 *
 * <p>Sound because, in the group's transaction, nothing else writes these rows or keys: pushes are
 * serialized by the partition lock, row projections and push results are written only by partition
 * transactions (the storage's other writers — pruning, log-epoch rotation, checkpoint activation — take the
 * lock too, and touch neither), and writes of the group's own works are tracked in {@link GroupWrites}
 * (disjointness keeps the hinted works off each other's read-ahead; a cascade (§6.11) or an unhinted work
 * that does write one turns that read back into a query).
 */
final class PushReadAhead {
    /**
     * What the works of a group wrote so far, through {@link PushTransaction}: projection rows ({@code table NUL
     * rowId}), idempotency keys ({@code clientId NUL clientCommitId}), and whether the serve gate's inputs may
     * have moved ({@link PushTx#advanceCheckpoint}). Kept for failed (rolled back) works too — a read-ahead
     * is only ever used less, never wrongly. A {@link PreRead} answers only reads nothing in here touches.
     */
    static final class GroupWrites {
        final Set<String> rows = new HashSet<>();
        final Set<String> keys = new HashSet<>();
        boolean gateMoved;
    }

    static String rowKey(String table, String rowId) {
        return table + '\u0000' + rowId;
    }

    static String pushKey(String clientId, String clientCommitId) {
        return clientId + '\u0000' + clientCommitId;
    }

    /**
     * One work's read-ahead: its idempotency lookup (§2.3) and the rows it announced, read under the partition
     * lock in the group's first round trip. Answers {@link PushTransaction#findPushResult} / {@link PushTransaction#readRows}
     * when the request is covered exactly (same key; every requested id read ahead) and nothing of it was
     * written in the group since (see {@link GroupWrites}); anything else queries as without it.
     */
    static final class PreRead {
        final PushReadHint hint;
        /** Whether the key was read ahead; then {@link #outcome} is its record or null. */
        boolean keyRead;
        /** The key's record could not be decoded: left to the work's own lookup, which reports it. */
        boolean keyUndecodable;

        PushOutcome outcome;
        /** Per table, the ids read ahead (found or not). */
        final Map<String, Set<String>> covered = new HashMap<>();
        /** Per table, the rows found. */
        final Map<String, Map<String, StoredRow>> found = new HashMap<>();

        PreRead(PushReadHint hint) {
            this.hint = hint;
        }

        boolean answers(String clientId, String clientCommitId, GroupWrites writes) {
            return keyRead
                    && hint.clientId().equals(clientId)
                    && hint.clientCommitId().equals(clientCommitId)
                    && !writes.keys.contains(pushKey(clientId, clientCommitId));
        }

        /** The rows as {@code readRows} returns them (request order, missing ids absent), or null when not covered. */
        Map<String, StoredRow> rows(String table, List<String> rowIds, GroupWrites writes) {
            Set<String> ids = covered.get(table);
            if (ids == null || rowIds.isEmpty()) {
                return null;
            }
            for (String id : rowIds) {
                if (!ids.contains(id) || writes.rows.contains(rowKey(table, id))) {
                    return null;
                }
            }
            return ProjectionRows.inRequestOrder(rowIds, found.getOrDefault(table, Map.of()));
        }
    }

    /** The idempotency key and the rows of a hint, each once. */
    private static Set<String> keysOf(PushReadHint h) {
        Set<String> keys = new LinkedHashSet<>();
        keys.add("k" + pushKey(h.clientId(), h.clientCommitId()));
        h.rows().forEach((table, ids) -> ids.forEach(id -> keys.add("r" + rowKey(table, id))));
        return keys;
    }

    /** Per job of the group (same index): its read-ahead, or null. */
    final PreRead[] byJob;
    /** The statements sent, each completing after its results are distributed. */
    private final List<CompletableFuture<Void>> sent = new ArrayList<>();

    PushReadAhead(
            PushResults results,
            InstalledSchema installed,
            SqlConnection conn,
            String partition,
            List<PushQueue.Job> group) {
        byJob = new PreRead[group.size()];
        Map<String, Integer> uses = new HashMap<>();
        for (PushQueue.Job j : group) {
            if (j.hint != null) {
                for (String k : keysOf(j.hint)) {
                    uses.merge(k, 1, Integer::sum);
                }
            }
        }
        Map<String, PreRead> byKey = new HashMap<>();
        Map<String, List<String>> idsByTable = new LinkedHashMap<>();
        Map<String, PreRead> byRow = new HashMap<>();
        for (int i = 0; i < byJob.length; i++) {
            PushReadHint h = group.get(i).hint;
            if (h == null || keysOf(h).stream().anyMatch(k -> uses.get(k) > 1)) {
                continue;
            }
            PreRead p = new PreRead(h);
            byJob[i] = p;
            byKey.put(pushKey(h.clientId(), h.clientCommitId()), p);
            h.rows().forEach((table, ids) -> {
                for (String id : ids) {
                    if (byRow.putIfAbsent(rowKey(table, id), p) == null) {
                        idsByTable
                                .computeIfAbsent(table, t -> new ArrayList<>())
                                .add(id);
                    }
                }
            });
        }
        if (byKey.isEmpty()) {
            return;
        }
        // the idempotency keys: one statement (a scalar one for a single key, as the locked lookup)
        Uni<RowSet<Row>> keys;
        if (byKey.size() == 1) {
            PushReadHint h = byKey.values().iterator().next().hint;
            keys = conn.preparedQuery(results.findPushResult)
                    .execute(Tuple.of(partition, h.clientId(), h.clientCommitId()))
                    .invoke(rs -> outcome(byKey.values().iterator().next(), first(rs), 0));
        } else {
            String[] clientIds = new String[byKey.size()];
            String[] commitIds = new String[byKey.size()];
            int n = 0;
            for (PreRead p : byKey.values()) {
                clientIds[n] = p.hint.clientId();
                commitIds[n++] = p.hint.clientCommitId();
            }
            keys = conn.preparedQuery(results.findPushResults)
                    .execute(Tuple.of(partition).addArrayOfString(clientIds).addArrayOfString(commitIds))
                    .invoke(rs -> {
                        for (Row r : rs) {
                            PreRead p = byKey.get(pushKey(r.getString(0), r.getString(1)));
                            if (p != null) {
                                outcome(p, r, 2);
                            }
                        }
                    });
        }
        sent.add(keys.invoke(rs -> byKey.values().forEach(p -> p.keyRead = !p.keyUndecodable))
                .replaceWithVoid()
                .subscribeAsCompletionStage());
        // the rows: one statement per table for every read-ahead work (a scalar one for a single id)
        idsByTable.forEach((table, ids) -> {
            RowTable rt = installed.tableOrNull(table);
            if (rt == null) {
                return; // unknown here: the work's own read reports it
            }
            Uni<RowSet<Row>> read = ids.size() == 1
                    ? conn.preparedQuery(rt.readRowSql).execute(Tuple.of(partition, ids.get(0)))
                    : conn.preparedQuery(rt.readRowsSql)
                            .execute(Tuple.of(partition).addArrayOfString(ids.toArray(String[]::new)));
            sent.add(read.invoke(rs -> {
                        List<StoredRow> rows = new ArrayList<>();
                        try {
                            for (Row r : rs) {
                                rows.add(ProjectionRows.storedRow(rt.schema, r));
                            }
                        } catch (RuntimeException e) {
                            return; // undecodable: not read ahead, the work's own read reports it
                        }
                        for (String id : ids) {
                            byRow.get(rowKey(table, id))
                                    .covered
                                    .computeIfAbsent(table, t -> new HashSet<>())
                                    .add(id);
                        }
                        for (StoredRow row : rows) {
                            PreRead p = byRow.get(rowKey(table, row.rowId()));
                            if (p != null) {
                                p.found
                                        .computeIfAbsent(table, t -> new HashMap<>())
                                        .put(row.rowId(), row);
                            }
                        }
                    })
                    .replaceWithVoid()
                    .subscribeAsCompletionStage());
        });
    }

    private static void outcome(PreRead p, Row r, int at) {
        try {
            p.outcome = r == null ? null : PushResults.pushOutcome(r, at);
        } catch (RuntimeException e) {
            p.keyUndecodable = true;
        }
    }

    /** Completes when every read-ahead statement is answered; fails with the first failure. */
    Uni<Void> await() {
        return PgSql.allSettled(sent);
    }

    /** Completes (never fails) when every read-ahead statement is answered. */
    CompletableFuture<Void> settled() {
        return CompletableFuture.allOf(
                sent.stream().map(f -> f.handle((v, e) -> null)).toArray(CompletableFuture[]::new));
    }
}
