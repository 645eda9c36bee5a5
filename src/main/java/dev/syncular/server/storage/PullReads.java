package dev.syncular.server.storage;

import io.smallrye.mutiny.Uni;
import java.util.Map;
import java.util.Set;

/**
 * The reads of a round's pull (§4.5 log window, §4.7 scope pin and snapshot pages, the §5.3 image build's pages): what
 * a pull-only round may read from a replica ({@link ReadReplicas}). {@link SyncStorage} is the primary's; the
 * methods mean what they mean there.
 */
public interface PullReads {

    /** {@link SyncStorage#readCommits}. */
    Uni<CommitWindow> readCommits(String partition, CommitQuery query);

    /** {@link SyncStorage#readScopePin}. */
    Uni<Long> readScopePin(String partition, String table, String variable, Set<String> values, long upToSeq);

    /** {@link SyncStorage#readSnapshotPage}. */
    Uni<SnapshotRows> readSnapshotPage(
            String partition,
            String table,
            Map<String, Set<String>> scopes,
            String afterRowId,
            int limit,
            long maxBytes);
}
