package dev.syncular.server.sync;

import dev.syncular.server.errors.SyncError;
import dev.syncular.server.storage.PlannedReaction;
import dev.syncular.server.sync.PushOperations.Rejection;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.smallrye.mutiny.Uni;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The commit-level policy of a new commit, inside its transaction: whole-commit validators (§6.8), then reaction
 * planners (§6.9). A validator rejection becomes the commit's terminating record, attributed to the operation it
 * names (an index outside the commit is a host bug: {@code sync.constraint_violation}); planners run only for an
 * accepted commit, and an invalid plan fails the transaction (nothing persisted, a retry plans again).
 */
final class CommitPolicy {
    /** The outcome: a rejection, or the reactions to append with the commit. */
    record Decision(Rejection rejection, List<PlannedReaction> reactions) {}

    private CommitPolicy() {}

    /**
     * @param trace the commit's span: current while each validator assembles its answer, so a webhook validator
     *     parents its call on it and sends its {@code traceparent}
     */
    static Uni<Decision> decide(WritePolicy policy, CommitEvidence commit, CandidateReader read, Context trace) {
        Uni<Void> validated = Uni.createFrom().voidItem();
        for (CommitValidator v : policy.commitValidators()) {
            validated = validated.flatMap(x -> {
                try (Scope ignored = trace.makeCurrent()) {
                    return RowValidation.invoke(() -> v.validate(commit, read));
                }
            });
        }
        int first =
                commit.operations().isEmpty() ? 0 : commit.operations().get(0).opIndex();
        return validated
                .onItem()
                .transform(v -> (Rejection) null)
                .onFailure(f -> !(f instanceof SyncError))
                .recoverWithItem(f -> {
                    if (f instanceof ValidationRejection r
                            && r.opIndex() >= commit.operations().size()) {
                        return RowValidation.rejection(
                                first, new IllegalStateException(), RowValidation.COMMIT_VALIDATOR_FAILED);
                    }
                    return RowValidation.rejection(first, f, RowValidation.COMMIT_VALIDATOR_FAILED);
                })
                .flatMap(rejection -> rejection != null
                        ? Uni.createFrom().item(new Decision(rejection, List.of()))
                        : plan(policy, commit, read).map(reactions -> new Decision(null, reactions)));
    }

    private static Uni<List<PlannedReaction>> plan(WritePolicy policy, CommitEvidence commit, CandidateReader read) {
        List<PlannedReaction> all = new ArrayList<>();
        Uni<Void> chain = Uni.createFrom().voidItem();
        for (ReactionPlanner p : policy.planners()) {
            chain = chain.flatMap(x -> {
                Uni<List<PlannedReaction>> planned;
                try {
                    planned = p.plan(commit, read);
                } catch (RuntimeException e) {
                    return Uni.createFrom().failure(e);
                }
                return planned == null
                        ? Uni.createFrom().voidItem()
                        : planned.invoke(list -> {
                                    if (list != null) {
                                        all.addAll(list);
                                    }
                                })
                                .replaceWithVoid();
            });
        }
        return chain.map(v -> {
            if (all.size() > PlannedReaction.MAX_PER_COMMIT) {
                throw new IllegalStateException("a commit may plan at most 100 reactions (§6.9)");
            }
            Set<String> keys = new HashSet<>();
            for (PlannedReaction r : all) {
                if (!keys.add(r.key())) {
                    throw new IllegalStateException("reaction keys must be unique within a commit (§6.9)");
                }
            }
            return all;
        });
    }
}
