package dev.syncular.server.storage.postgres;

import dev.syncular.server.storage.ChangeToWrite;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.StoredChange;
import dev.syncular.server.storage.StoredCommit;
import dev.syncular.server.wire.Op;
import io.vertx.core.buffer.Buffer;
import io.vertx.mutiny.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * A commit's append to the log (§2.1, §2.2): the one statement that writes the {@code sync_commits} row, its
 * changes and its commit-to-scope index keys; the statement's arguments built from the changes to write. The
 * partition's {@code max_commit_seq} and the §8.2 announcement on the notification channel are written once per
 * group transaction ({@link #groupAnnouncement}), not per commit.
 */
final class CommitAppend {
    /** The arguments of one append, with the per-change scopes JSON and payloads they carry. */
    record Args(Tuple tuple, String[] scopes, Buffer[] payloads) {}

    private CommitAppend() {}

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
     * See {@link PushContext#appendCommit} and {@link PushContext#appendCommitWithResult}. The commit is announced
     * with its group's other commits, once per group transaction ({@link #groupAnnouncement}).
     */
    static String appendCommitSql(String pgSchema, boolean withResult) {
        return "WITH c AS (INSERT INTO " + PgSql.qualified(pgSchema, "sync_commits")
                + " (partition_id, commit_seq, created_at_ms, actor_id,"
                + " client_id, client_commit_id, change_count, tables, writer_version, trace_parent)"
                + " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, NULLIF($19, ''))),"
                + " ch AS (INSERT INTO " + PgSql.qualified(pgSchema, "sync_changes")
                + " (partition_id, commit_seq, change_index, tbl, row_id, op,"
                + " row_version, scopes, payload) SELECT $1, $2, u.i, u.t, u.r, u.o, u.v, u.s::jsonb, u.p"
                + " FROM unnest($10::integer[], $11::text[], $12::text[], $13::integer[], $14::bigint[], $15::text[],"
                + " $16::bytea[]) AS u(i, t, r, o, v, s, p)),"
                + " sc AS (INSERT INTO " + PgSql.qualified(pgSchema, "sync_commit_scopes")
                + " (partition_id, tbl, scope_key, commit_seq)"
                // the pairs are distinct (args): a plain insert, no speculative insertion and its confirm record
                + " SELECT $1, u.t, u.k, $2 FROM unnest($17::text[], $18::text[]) AS u(t, k))"
                + (withResult
                        ? ", pr AS (INSERT INTO " + PgSql.qualified(pgSchema, "sync_push_results")
                                + " (partition_id, client_id, client_commit_id,"
                                + " status, commit_seq, result, created_at_ms) VALUES ($1, $20, $21, $22, $23, $24, $25))"
                        : "")
                // data-modifying CTEs run whether or not the main query reads them
                + " SELECT 1";
    }

    /**
     * The statement a group transaction runs right before its {@code COMMIT} when its works appended commits: the
     * partition's {@code max_commit_seq} ({@code $1} partition, {@code $2} the group's last commit) and the §8.2
     * announcement of the group's commits on {@link #notificationChannel} ({@code $3}, {@link #announcement}),
     * delivered to every pod's LISTEN connection only if (and when) the transaction commits. One {@code pg_notify}
     * a group instead of one a commit: PostgreSQL takes its cluster-wide notify lock once a transaction either way,
     * and a group of ten commits announced once committed 21–24 % more inserts a second than announced one by one
     * ({@code bench/notify.sh}, docs/SCALING.md).
     */
    static String groupAnnouncement(String pgSchema) {
        return "WITH mx AS (UPDATE " + PgSql.qualified(pgSchema, "sync_partitions")
                + " SET max_commit_seq = $2 WHERE partition_id = $1)"
                + " SELECT pg_notify('" + notificationChannel(pgSchema) + "', $3)";
    }

    /**
     * The §8.2 commit notification of a group's commits {@code first..last} of {@code partition}:
     * {@code <partition>:<seq>} for one commit (as one commit was always announced), {@code <partition>:<first>-<last>}
     * for several (a pod of an earlier release skips the range, and its sockets are woken to catch up at the
     * partition's next commit).
     */
    static String announcement(String partition, long first, long last) {
        return first == last ? partition + ":" + last : partition + ":" + first + "-" + last;
    }

    /**
     * The arguments {@code $1..$19} of {@link PushContext#appendCommit} for commit {@code seq} of
     * {@code partition}, {@code traceParent} ({@link StoredCommit#UNTRACED} when the push was not traced) last.
     *
     * @throws StorageException {@code MISSING_SCOPES} for a change without stored scopes (or the failure of the
     *     table lookup or payload encoding)
     */
    static Args args(
            InstalledSchema installed,
            String partition,
            long seq,
            String actorId,
            String clientId,
            String clientCommitId,
            long createdAtMs,
            List<ChangeToWrite> changes,
            int writerVersion,
            String traceParent) {
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
        // each (table, scope key) once: changes of one table often share a scope
        Set<List<String>> scopePairs = new HashSet<>();
        Set<String> commitTables = new LinkedHashSet<>();
        for (int i = 0; i < n; i++) {
            ChangeToWrite ch = changes.get(i);
            RowTable rt = installed.table(ch.table());
            if (ch.scopes() == null) {
                throw new StorageException(
                        StorageException.MISSING_SCOPES, "change has no stored scopes", Map.of("table", ch.table()));
            }
            commitTables.add(ch.table());
            for (String key : rt.scopeKeys(ch.scopes())) {
                if (scopePairs.add(List.of(ch.table(), key))) {
                    scopeTables.add(ch.table());
                    scopeKeys.add(key);
                }
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
        Tuple args = Tuple.tuple()
                .addValue(partition)
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
                .addArrayOfString(scopeKeys.toArray(String[]::new))
                .addValue(traceParent);
        return new Args(args, scopes, payloads);
    }

    /** The appended commit, whole and decoded from the payloads written (for {@code RecentCommits}). */
    static StoredCommit storedCommit(
            InstalledSchema installed,
            long seq,
            String actorId,
            String clientId,
            String clientCommitId,
            long createdAtMs,
            List<ChangeToWrite> changes,
            String traceParent,
            Args built) {
        int n = changes.size();
        String[] scopes = built.scopes();
        Buffer[] payloads = built.payloads();
        List<StoredChange> whole = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            ChangeToWrite ch = changes.get(i);
            whole.add(new StoredChange(
                    ch.table(),
                    ch.rowId(),
                    ch.op(),
                    ch.rowVersion(),
                    StoredScopes.parseScopes(scopes[i]),
                    payloads[i] == null ? null : installed.table(ch.table()).decodePayload(payloads[i].getBytes())));
        }
        return new StoredCommit(seq, createdAtMs, actorId, clientId, clientCommitId, whole, traceParent);
    }
}
