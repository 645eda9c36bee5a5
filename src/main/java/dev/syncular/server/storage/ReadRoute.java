package dev.syncular.server.storage;

import io.smallrye.mutiny.Uni;
import java.util.Map;
import java.util.Set;

/**
 * Where a pull-only round reads ({@link ReadReplicas#route}): the primary ({@link #PRIMARY}), or a replica whose
 * replayed state holds the partition's commits through {@code upToSeq} — the round's pull then answers as of that
 * sequence at the newest (its log window and bootstrap pin end there).
 *
 * @param onReplica whether the round reads {@code reads} (a replica) instead of the primary
 * @param reads     the replica's reads ({@link PullReads} of the primary are the storage itself)
 * @param upToSeq   the partition's commit sequence read on the replica; {@link Long#MAX_VALUE} on the primary
 */
public record ReadRoute(boolean onReplica, PullReads reads, long upToSeq) {
    /** The round reads the primary, as every round does without replicas. */
    public static final ReadRoute PRIMARY = new ReadRoute(false, Unrouted.READS, Long.MAX_VALUE);

    public ReadRoute {
        if (reads == null) {
            throw new IllegalArgumentException("reads");
        }
    }

    /** The {@link #PRIMARY} route's reads: the round keeps the primary storage, so nothing reads through these. */
    private enum Unrouted implements PullReads {
        READS;

        @Override
        public Uni<CommitWindow> readCommits(String partition, CommitQuery query) {
            throw new IllegalStateException("the primary route reads the storage itself");
        }

        @Override
        public Uni<Long> readScopePin(
                String partition, String table, String variable, Set<String> values, long upToSeq) {
            throw new IllegalStateException("the primary route reads the storage itself");
        }

        @Override
        public Uni<SnapshotRows> readSnapshotPage(
                String partition,
                String table,
                Map<String, Set<String>> scopes,
                String afterRowId,
                int limit,
                long maxBytes) {
            throw new IllegalStateException("the primary route reads the storage itself");
        }
    }
}
