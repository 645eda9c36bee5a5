package dev.syncular.server.sync;

import io.smallrye.mutiny.Uni;
import java.util.List;
import java.util.Map;

/**
 * The read-only view of a commit's candidate state (§6.8 "candidate-state reader"): the stored rows of the
 * partition with every operation the commit staged laid over them, read on the push transaction's own connection.
 */
public interface CandidateReader {
    /** A candidate row: its values keyed by column name and its {@code server_version}. */
    record CandidateRow(String table, String rowId, long serverVersion, Map<String, Object> values) {}

    /** The final candidate row, or a {@code null} item when it is absent or the commit deletes it. */
    Uni<CandidateRow> getRow(String table, String rowId);

    /**
     * Candidate rows of {@code table} whose scope variables equal {@code scopeFilter} (required, non-empty), in
     * ascending row id order after {@code afterRowId} (exclusive, may be null), at most {@code limit} (1–1000).
     */
    Uni<List<CandidateRow>> scanRows(String table, Map<String, String> scopeFilter, String afterRowId, int limit);
}
