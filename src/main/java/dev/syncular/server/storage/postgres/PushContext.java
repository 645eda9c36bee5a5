package dev.syncular.server.storage.postgres;

import dev.syncular.server.storage.RecentCommits;
import java.util.concurrent.atomic.LongAdder;

/**
 * What every partition transaction of one storage shares: the statement texts of the push writes, built
 * once (the pool's prepared-statement cache is keyed by the text), and the stores the transaction reads
 * and writes through.
 */
final class PushContext {
    /**
     * A commit's log writes in one statement (§2.1, §2.2): the {@code sync_commits} row ({@code $1..$9};
     * its {@code BEFORE INSERT} writer-fence trigger fires as for a plain insert and fails the whole
     * statement), its changes from parallel arrays ({@code $10..$16}: change index, table, row id, op,
     * row version, scopes JSON text, payload), its scope-index keys ({@code $17} tables, {@code $18} keys),
     * and the push span's {@code traceparent} ({@code $19}, {@code ''} stored as NULL). Data-modifying CTEs run
     * to completion whether or not the main query reads them, and all of them or none take effect.
     */
    final String appendCommit;
    /**
     * The partition's {@code max_commit_seq} and the §8.2 announcement of the group's commits
     * ({@link CommitAppend#groupAnnouncement}), once per group transaction right before its {@code COMMIT}
     * ({@link PushQueue}), in the same transaction as the commits (§2.1; the replica freshness rule reads the two
     * from one snapshot). Once per group, not per commit: each update of the locked row inside a work's savepoint
     * also wrote a multixact (the lock is the transaction's, the update the savepoint's), about 120 WAL bytes a
     * commit (docs/BENCHMARKS.md).
     */
    final String announceGroup;
    /**
     * {@link #appendCommit} plus the commit's idempotency record ({@code $20..$25}: client id, client commit
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
    /** §6.7 queryAuthoritative: {@code SELECT sync_guarded_query($1, $2)} ({@link PushTransaction#queryRows}). */
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

    PushContext(
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
        appendCommit = CommitAppend.appendCommitSql(pgSchema, false);
        appendCommitWithResult = CommitAppend.appendCommitSql(pgSchema, true);
        announceGroup = CommitAppend.groupAnnouncement(pgSchema);
        readTombstone =
                "SELECT commit_seq FROM " + tombstones + " WHERE partition_id = $1 AND tbl = $2 AND row_id = $3";
        deleteRowScopes = "DELETE FROM " + rowScopes + " WHERE partition_id = $1 AND tbl = $2 AND row_id = $3";
        insertRowScopes = "INSERT INTO " + rowScopes + " (partition_id, tbl, scope_key, row_id)"
                + " SELECT $1, $2, k, $3 FROM unnest($4::text[]) AS u(k) ON CONFLICT DO NOTHING";
        appendReactions = PostgresReactionStore.appendSql(pgSchema);
        guardedQuery = "SELECT " + PgSql.qualified(pgSchema, CoreTables.GUARDED_QUERY) + "($1, $2)";
        deleteTombstone = "DELETE FROM " + tombstones + " WHERE partition_id = $1 AND tbl = $2 AND row_id = $3";
        upsertTombstone = "INSERT INTO " + tombstones + " (partition_id, tbl, row_id, commit_seq)"
                + " VALUES ($1, $2, $3, $4) ON CONFLICT (partition_id, tbl, row_id) DO UPDATE SET commit_seq = EXCLUDED.commit_seq";
    }
}
