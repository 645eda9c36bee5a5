package dev.syncular.server.storage.postgres;

import dev.syncular.server.storage.CommitQuery;
import dev.syncular.server.storage.CommitWindow;
import dev.syncular.server.storage.PullReads;
import dev.syncular.server.storage.SnapshotRows;
import io.smallrye.mutiny.Uni;
import java.util.Map;
import java.util.Set;

/**
 * The pull reads of a pull-only round (§4.5 commit windows and scope pins, §4.3 snapshot pages) on a hot standby of
 * the storage's database: the same schema and statements as on the primary ({@link PostgresReadReplicas}).
 */
final class ReplicaPullReads implements PullReads {
    private final CommitLogReads log;
    private final SnapshotReads pages;

    ReplicaPullReads(CommitLogReads log, SnapshotReads pages) {
        this.log = log;
        this.pages = pages;
    }

    @Override
    public Uni<CommitWindow> readCommits(String partition, CommitQuery query) {
        return log.readCommits(partition, query);
    }

    @Override
    public Uni<Long> readScopePin(String partition, String table, String variable, Set<String> values, long upToSeq) {
        return log.readScopePin(partition, table, variable, values, upToSeq);
    }

    @Override
    public Uni<SnapshotRows> readSnapshotPage(
            String partition,
            String table,
            Map<String, Set<String>> scopes,
            String afterRowId,
            int limit,
            long maxBytes) {
        return pages.readSnapshotPage(partition, table, scopes, afterRowId, limit, maxBytes);
    }
}
