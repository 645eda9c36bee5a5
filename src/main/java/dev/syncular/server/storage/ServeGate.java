package dev.syncular.server.storage;

import java.util.List;
import java.util.Objects;

/**
 * The serve gate of a partition, read in one statement: the stored schema-version marker, the partition's
 * log epoch, and the checkpoints at the running schema version that are not activated. The token
 * {@code (storedSchemaVersion, logEpoch)} must be unchanged between a request's plan and its release.
 */
public record ServeGate(int storedSchemaVersion, String logEpoch, List<StoredCheckpoint> pending) {
    public ServeGate {
        pending = List.copyOf(pending);
    }

    /** True when the token (stored schema version, log epoch) differs from {@code other}'s. */
    public boolean tokenChanged(ServeGate other) {
        return storedSchemaVersion != other.storedSchemaVersion || !Objects.equals(logEpoch, other.logEpoch);
    }
}
