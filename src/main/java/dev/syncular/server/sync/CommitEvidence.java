package dev.syncular.server.sync;

import java.util.List;

/**
 * What a whole-commit validator (§6.8) and a reaction planner (§6.9) receive about the commit being applied: its
 * identity, the ambient actor and partition, and every operation in order, including an idempotent delete of an
 * absent row (no rows, no next version).
 */
public record CommitEvidence(
        String clientId, String clientCommitId, String actorId, String partition, List<OperationEvidence> operations) {}
