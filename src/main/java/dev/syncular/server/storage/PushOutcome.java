package dev.syncular.server.storage;

import dev.syncular.server.wire.CommitStatus;
import java.util.Objects;

/**
 * A persisted push result under the idempotency key (partition, clientId, clientCommitId) (§2.3).
 *
 * @param status      the original status: {@code APPLIED} or {@code REJECTED} (the engine replays APPLIED as
 *                    {@code cached}, §6.3); storage keeps it verbatim
 * @param commitSeq   the assigned commitSeq for an applied commit, else {@code null}
 * @param result      the opaque encoded result the engine replays byte-equivalent
 * @param createdAtMs when the result was saved
 */
public record PushOutcome(CommitStatus status, Long commitSeq, byte[] result, long createdAtMs) {
    public PushOutcome {
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(result, "result");
    }
}
