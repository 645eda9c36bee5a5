package dev.syncular.server.storage;

import java.util.Objects;

/**
 * The serve gate together with the partition's pruning horizon, read in one statement: the verify read of
 * read-verify-refuse (§2.4) doubles as the post-read horizon recheck of incremental pulls (§4.6).
 *
 * @param gate       the serve gate for the running schema version
 * @param horizonSeq the partition's {@code horizonSeq}; {@code 0} when the partition is not registered
 */
public record GateCheck(ServeGate gate, long horizonSeq) {
    public GateCheck {
        Objects.requireNonNull(gate, "gate");
    }
}
