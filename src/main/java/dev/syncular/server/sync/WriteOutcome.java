package dev.syncular.server.sync;

import dev.syncular.server.errors.ErrorCode;

/** The §6.2 outcome of one push operation against the stored state. */
public sealed interface WriteOutcome {
    /** Write the row: full values, the new {@code server_version} and column versions. */
    record Apply(Object[] values, long serverVersion, long[] columnVersions, boolean insert) implements WriteOutcome {}

    /** Delete the stored row and record a tombstone (§2.2). */
    record Delete(Object[] storedValues) implements WriteOutcome {}

    /** Deleting an absent row: applied, no change emitted, no authorization (§6.2). */
    record NoOp() implements WriteOutcome {}

    /** {@code sync.version_conflict} with the server row and the {@code conflictColumns} bitmap (§6.3). */
    record Conflict(long serverVersion, Object[] serverRow, byte[] conflictColumns) implements WriteOutcome {}

    /** A commit-terminating error record (§6.3). */
    record Reject(ErrorCode code, String message) implements WriteOutcome {}
}
