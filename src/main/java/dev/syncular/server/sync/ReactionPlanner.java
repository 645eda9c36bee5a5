package dev.syncular.server.sync;

import dev.syncular.server.storage.PlannedReaction;
import io.smallrye.mutiny.Uni;
import java.util.List;

/**
 * The reaction planner (§6.9): runs for a new commit after every validator accepted the final candidate state,
 * before the commit is appended; the reactions it returns are written in the same transaction as the commit.
 * It must be pure: candidate reads and returned data only, never a side effect outside the transaction (the
 * delivery worker performs those after commit). A failure aborts the transaction and the round fails with
 * {@code sync.internal_error}; nothing is persisted, so a retry may plan again. Conflicts, rejections and
 * replays never reach it.
 */
@FunctionalInterface
public interface ReactionPlanner {
    Uni<List<PlannedReaction>> plan(CommitEvidence commit, CandidateReader read);
}
