package dev.syncular.server.storage;

import io.smallrye.mutiny.Uni;
import java.util.List;
import java.util.Set;

/**
 * The reads remote operations make on the storage's own database (REMOTE.md §2, §6): a registered query's snapshot
 * and the tables notified commits touched. The statements are the caller's (rewritten to the partition over
 * {@link RowTables}' names); where and how they run — the primary or a read replica, the transaction, the timeout — is
 * the storage's.
 */
public interface QueryReads {

    /**
     * REMOTE.md §2: in one {@code REPEATABLE READ READ ONLY} transaction — one snapshot — under the storage's
     * {@code statement_timeout}, the partition's {@code maxCommitSeq} ({@code 0} for a partition not registered) and
     * then {@code sql} with {@code args} ({@code $1} the partition). With read replicas, on a replica in rotation that
     * has replayed the partition through every commit this pod heard announced, else on the primary (docs/SCALING.md,
     * "Reads from replicas"): a replica behind, failing, or cancelling the statement for a conflict with replay
     * reruns it on the primary. A failure of the statement itself fails with {@link StorageException#QUERY_FAILED}
     * ({@code details.sqlstate}; the database's failure as its cause); any other failure is passed on as it is.
     */
    Uni<QuerySnapshot> readSnapshot(String partition, String sql, List<Object> args);

    /**
     * REMOTE.md §6: the distinct tables the commits {@code commitSeqs} of {@code partition} changed, in one index-only
     * read of the change log (no payload decoded).
     */
    Uni<Set<String>> changedTables(String partition, List<Long> commitSeqs);
}
