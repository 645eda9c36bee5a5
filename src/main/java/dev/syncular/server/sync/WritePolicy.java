package dev.syncular.server.sync;

import java.util.List;
import java.util.Map;

/**
 * The application policy a host installs on the push path: row validators by table (§6.7), whole-commit
 * validators (§6.8) and reaction planners (§6.9). Every part is optional; with none the push path does no
 * evidence building, candidate reads or callbacks at all.
 */
public record WritePolicy(
        Map<String, List<RowValidator>> rowValidators,
        List<CommitValidator> commitValidators,
        List<ReactionPlanner> planners) {
    public static final WritePolicy NONE = new WritePolicy(Map.of(), List.of(), List.of());

    public WritePolicy {
        rowValidators = Map.copyOf(rowValidators);
        commitValidators = List.copyOf(commitValidators);
        planners = List.copyOf(planners);
    }

    /** The row validators of {@code table} (empty when it has none). */
    List<RowValidator> rowValidators(String table) {
        List<RowValidator> v = rowValidators.get(table);
        return v == null ? List.of() : v;
    }

    /** Whether the commit needs evidence: a whole-commit validator or a planner is installed. */
    boolean needsCommitEvidence() {
        return !commitValidators.isEmpty() || !planners.isEmpty();
    }
}
