package dev.syncular.server.storage;

import java.util.Objects;

/**
 * One partition registry entry (§2.1, §4.6).
 *
 * @param partition     the host partition id (never on the wire)
 * @param logEpoch      the opaque, unpredictable log-continuity token (§2.1)
 * @param maxCommitSeq  the newest assigned commitSeq; 0 for an empty log
 * @param horizonSeq    the pruning horizon: commits with {@code commitSeq <= horizonSeq} may be gone (§4.6)
 * @param createdAtMs   registry creation time
 * @param lastSeenAtMs  the last {@code touchPartition} time (authentication refresh, §2.1)
 */
public record PartitionState(
        String partition, String logEpoch, long maxCommitSeq, long horizonSeq, long createdAtMs, long lastSeenAtMs) {
    public PartitionState {
        Objects.requireNonNull(partition, "partition");
        Objects.requireNonNull(logEpoch, "logEpoch");
    }
}
