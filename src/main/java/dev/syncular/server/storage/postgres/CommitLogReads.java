package dev.syncular.server.storage.postgres;

import dev.syncular.server.storage.CommitQuery;
import dev.syncular.server.storage.CommitWindow;
import dev.syncular.server.storage.StoredChange;
import dev.syncular.server.storage.StoredCommit;
import dev.syncular.server.wire.Op;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.buffer.Buffer;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Pull reads of the commit log (§4.5 incremental pull: the commit window of one subscription, filtered to
 * the effective scopes (§3.2) through the commit-to-scope index (§3.1), never splitting a commit; §4.7 the
 * bootstrap scope pin). Changes come back decoded with the table's full-row codec (§2.4).
 */
final class CommitLogReads {
    private final Pool pool;
    private final InstalledSchema installed;

    private final String scopePin;
    /**
     * One batch of a commit window in one statement: the next {@code $6} distinct commit seqs of the scope
     * index ({@code $4 < seq <= $5}), each with its commit and its changes to table {@code $2} — a seq
     * without such a change still comes back once (NULL change columns), so the batch size
     * and the last scanned seq are those of the index.
     */
    final String commitWindow;
    /** One whole commit with every change (§8.2 realtime fanout reads each notified commit once). */
    private final String wholeCommit;

    CommitLogReads(Pool pool, String pgSchema, InstalledSchema installed) {
        this.pool = pool;
        this.installed = installed;
        String commitScopes = PgSql.qualified(pgSchema, "sync_commit_scopes");
        scopePin = "SELECT COALESCE(max(s.seq), 0) FROM unnest($3::text[]) AS k(key),"
                + " LATERAL (SELECT commit_seq AS seq FROM " + commitScopes
                + " WHERE partition_id = $1 AND tbl = $2 AND scope_key = k.key AND commit_seq <= $4"
                + " ORDER BY commit_seq DESC LIMIT 1) s";
        commitWindow = "SELECT s.commit_seq, s.created_at_ms, s.actor_id, s.client_id, s.client_commit_id,"
                + " ch.row_id, ch.op, ch.row_version, ch.scopes::text, ch.payload, s.candidates"
                + " FROM (SELECT w.* FROM (SELECT d.commit_seq, c.created_at_ms, c.actor_id, c.client_id,"
                + " c.client_commit_id, count(*) OVER () AS candidates,"
                + " sum(coalesce(c.change_count, 0)) OVER (ORDER BY d.commit_seq) - coalesce(c.change_count, 0) AS before"
                + " FROM (SELECT DISTINCT commit_seq FROM " + commitScopes
                + " WHERE partition_id = $1 AND tbl = $2 AND scope_key = ANY($3) AND commit_seq > $4 AND commit_seq <= $5"
                + " ORDER BY commit_seq LIMIT $6) d"
                // §4.5 commit window: each seq's commit and changes are looked up by primary key in a LATERAL subquery
                // kept apart (OFFSET 0), so the window's seq is always an index condition. As plain joins, a
                // partition the statistics do not know yet (created since the last ANALYZE, estimated at one row)
                // got a plan that scanned the whole partition once per seq of the window: 5.5 s for 1,000 seqs of
                // 20,000.
                + " LEFT JOIN LATERAL (SELECT created_at_ms, actor_id, client_id, client_commit_id, change_count FROM "
                + PgSql.qualified(pgSchema, "sync_commits")
                + " WHERE partition_id = $1 AND commit_seq = d.commit_seq OFFSET 0) c ON true) w"
                // the statement's rows bounded by the commits' change counts: the seqs whose commits before them
                // hold fewer than $7 changes (the first one always). A thousand 200-change commits had read 200,000
                // rows for a window cut at 1,000 changes; two pods under a push flood ran out of heap.
                + " WHERE w.before < $7) s"
                + " LEFT JOIN LATERAL (SELECT change_index, row_id, op, row_version, scopes, payload FROM "
                + PgSql.qualified(pgSchema, "sync_changes")
                + " WHERE partition_id = $1 AND commit_seq = s.commit_seq AND tbl = $2 OFFSET 0) ch ON true"
                + " ORDER BY s.commit_seq, ch.change_index";
        wholeCommit = "SELECT c.commit_seq, c.created_at_ms, c.actor_id, c.client_id, c.client_commit_id,"
                + " ch.row_id, ch.op, ch.row_version, ch.scopes::text, ch.payload, ch.tbl, c.trace_parent"
                + " FROM " + PgSql.qualified(pgSchema, "sync_commits") + " c LEFT JOIN "
                + PgSql.qualified(pgSchema, "sync_changes") + " ch"
                + " ON ch.partition_id = c.partition_id AND ch.commit_seq = c.commit_seq"
                + " WHERE c.partition_id = $1 AND c.commit_seq = $2 ORDER BY ch.change_index";
    }

    /** {@link dev.syncular.server.storage.SyncStorage#readCommit}: every change of every table, decoded. */
    Uni<StoredCommit> readCommit(String partition, long commitSeq) {
        return pool.preparedQuery(wholeCommit)
                .execute(Tuple.of(partition, commitSeq))
                .map(rs -> {
                    Row head = null;
                    List<StoredChange> changes = new ArrayList<>();
                    for (Row r : rs) {
                        head = r;
                        if (r.getValue(5) == null) {
                            continue;
                        }
                        String table = r.getString(10);
                        Buffer payload = r.getBuffer(9);
                        changes.add(new StoredChange(
                                table,
                                r.getString(5),
                                Op.of(r.getInteger(6)),
                                r.getLong(7),
                                StoredScopes.parseScopes(r.getString(8)),
                                payload == null ? null : installed.table(table).decodePayload(payload.getBytes())));
                    }
                    if (head == null) {
                        return null;
                    }
                    String traceParent = head.getString(11);
                    return commitOf(head, changes, traceParent == null ? StoredCommit.UNTRACED : traceParent);
                });
    }

    Uni<Long> readScopePin(String partition, String table, String variable, Set<String> values, long upToSeq) {
        String[] keys;
        try {
            keys = installed.table(table).scopeKeys(variable, values);
        } catch (RuntimeException e) {
            return Uni.createFrom().failure(e);
        }
        // one index probe per key (PRIMARY KEY (partition_id, tbl, scope_key, commit_seq)), newest first
        return pool.preparedQuery(scopePin)
                .execute(Tuple.of(partition, table).addArrayOfString(keys).addValue(upToSeq))
                .map(rs -> rs.iterator().next().getLong(0));
    }

    Uni<CommitWindow> readCommits(String partition, CommitQuery query) {
        RowTable rt;
        String[] keys;
        try {
            rt = installed.table(query.table());
            String variable = query.variables().get(0); // §4.7: the first scope variable, keys sorted
            keys = rt.scopeKeys(variable, query.scopes().get(variable));
            for (String v : query.variables()) {
                rt.scopeKeys(v, query.scopes().get(v)); // validates every variable is declared
            }
        } catch (RuntimeException e) {
            return Uni.createFrom().failure(e);
        }
        int batch = Math.min(Math.max(query.changeLimit() + 1, 32), 1000);
        return scanCommits(partition, rt, query, keys, query.afterSeq(), new ArrayList<>(), 0, batch);
    }

    private Uni<CommitWindow> scanCommits(
            String partition,
            RowTable rt,
            CommitQuery query,
            String[] keys,
            long fromSeq,
            List<StoredCommit> acc,
            int accChanges,
            int batch) {
        if (fromSeq >= query.upToSeq()) {
            return Uni.createFrom().item(new CommitWindow(acc, Math.max(query.upToSeq(), query.afterSeq()), false));
        }
        return pool.preparedQuery(commitWindow)
                .execute(Tuple.of(partition, query.table())
                        .addArrayOfString(keys)
                        .addValue(fromSeq)
                        .addValue(query.upToSeq())
                        .addValue(batch)
                        .addValue((long) query.changeLimit() + 1))
                .chain(rs -> {
                    int seqs = 0;
                    long candidates = 0;
                    long lastSeq = -1;
                    for (Row r : rs) {
                        long seq = r.getLong(0);
                        if (seq != lastSeq) {
                            seqs++;
                            lastSeq = seq;
                            candidates = r.getLong(10);
                        }
                    }
                    if (seqs == 0) {
                        return Uni.createFrom().item(new CommitWindow(acc, query.upToSeq(), false));
                    }
                    List<StoredCommit> commits = groupCommits(rt, query, rs);
                    int total = accChanges;
                    for (StoredCommit c : commits) {
                        int n = c.changes().size();
                        if (total > 0 && total + n > query.changeLimit()) {
                            // §4.5: never split a commit; nextCursor = last fully delivered commitSeq
                            return Uni.createFrom()
                                    .item(new CommitWindow(
                                            acc, acc.get(acc.size() - 1).commitSeq(), true));
                        }
                        acc.add(c);
                        total += n;
                    }
                    if (candidates < batch && seqs == candidates) {
                        // every seq of the log up to upToSeq was read: the window is whole
                        return Uni.createFrom().item(new CommitWindow(acc, query.upToSeq(), false));
                    }
                    // more seqs follow: the batch was full, or the change budget stopped the statement early
                    return scanCommits(partition, rt, query, keys, lastSeq, acc, total, batch);
                });
    }

    private static List<StoredCommit> groupCommits(RowTable rt, CommitQuery query, RowSet<Row> rows) {
        List<StoredCommit> out = new ArrayList<>();
        long currentSeq = -1;
        Row head = null;
        List<StoredChange> changes = new ArrayList<>();
        for (Row r : rows) {
            long seq = r.getLong(0);
            if (seq != currentSeq) {
                if (head != null && !changes.isEmpty()) {
                    out.add(commitOf(head, changes, StoredCommit.UNTRACED));
                }
                currentSeq = seq;
                head = r;
                changes = new ArrayList<>();
            }
            if (r.getValue(5) == null) {
                continue; // an index seq without a change to this table (see #commitWindow)
            }
            Map<String, String> scopes = StoredScopes.parseScopes(r.getString(8));
            if (!query.matches(scopes)) {
                continue;
            }
            Op op = Op.of(r.getInteger(6));
            Buffer payload = r.getBuffer(9);
            changes.add(new StoredChange(
                    query.table(),
                    r.getString(5),
                    op,
                    r.getLong(7),
                    scopes,
                    payload == null ? null : rt.decodePayload(payload.getBytes())));
        }
        if (head != null && !changes.isEmpty()) {
            out.add(commitOf(head, changes, StoredCommit.UNTRACED));
        }
        return out;
    }

    private static StoredCommit commitOf(Row head, List<StoredChange> changes, String traceParent) {
        return new StoredCommit(
                head.getLong(0),
                head.getLong(1),
                head.getString(2),
                head.getString(3),
                head.getString(4),
                changes,
                traceParent);
    }
}
