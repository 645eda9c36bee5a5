package dev.syncular.server.sync;

import io.smallrye.mutiny.Uni;

/**
 * A whole-commit validator (§6.8). It runs once per new commit, after every operation was staged (and every
 * {@link RowValidator} and §6.11 reference rule accepted), before the commit is appended, inside the same
 * partition-serialized transaction. It sees the operation evidence and reads the candidate state through
 * {@link CandidateReader}. A replayed commit never runs it.
 *
 * <p>It rejects by failing with a {@link ValidationRejection}, attributed to its {@code opIndex} or, without
 * one, to the first operation; any other failure rejects with
 * {@code sync.constraint_violation} and the fixed message {@code whole-commit validator failed}. A
 * {@link dev.syncular.server.errors.SyncError} fails the whole request instead, rejecting nothing and persisting
 * nothing (an unreachable host service answers {@code sync.internal_error}, retryable).
 */
@FunctionalInterface
public interface CommitValidator {
    Uni<Void> validate(CommitEvidence commit, CandidateReader read);
}
