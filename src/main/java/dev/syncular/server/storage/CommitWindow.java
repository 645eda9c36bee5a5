package dev.syncular.server.storage;

import java.util.List;

/**
 * The result of {@link SyncStorage#readCommits}: matching commits oldest first (each with its matching
 * changes only) and {@code scannedThroughSeq}, the highest commitSeq whose scan completed — the query's
 * {@code upToSeq} when the window was not truncated, else the last fully delivered commitSeq (§4.5
 * cursor advancement: {@code nextCursor = max(request cursor, scannedThroughSeq)}).
 */
public record CommitWindow(List<StoredCommit> commits, long scannedThroughSeq, boolean truncated) {
    public CommitWindow {
        commits = List.copyOf(commits);
    }

    public int changeCount() {
        int n = 0;
        for (StoredCommit c : commits) {
            n += c.changes().size();
        }
        return n;
    }
}
