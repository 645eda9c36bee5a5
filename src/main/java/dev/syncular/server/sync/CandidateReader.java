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

    /**
     * §6.7 / §6.8 {@code queryAuthoritative}: the registered query {@code operation} (operation id or bare name)
     * with {@code params}, run on the push transaction's own connection with every relation bound to the
     * commit's partition (REMOTE.md §2), over the candidate state (every operation staged so far included): its
     * rows keyed by result column, see {@link RegisteredQueries#query}. The registered query's row cap and the
     * storage's statement timeout apply; failures are REMOTE.md §7's ({@code operation.unknown},
     * {@code operation.invalid_request}, {@code operation.result_too_large}, {@code operation.query_failed}),
     * which a validator that does not catch them turns into {@code sync.constraint_violation}. The query's
     * §2.1 authorization does not apply: the reader is a server-host capability inside the already
     * authenticated partition (§6.8).
     */
    Uni<List<Map<String, Object>>> queryAuthoritative(String operation, Map<String, Object> params);
}
