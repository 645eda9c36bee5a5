package dev.syncular.server.storage;

import java.util.Objects;

/**
 * What a sync request reads on entry, in one snapshot where the storage can (§2.1, §2.4, §4.5): the touched
 * partition, its serve gate for the running schema version, and the client's cursor record.
 *
 * @param partition the partition state after the touch (registered if it was absent; last-seen refreshed)
 * @param gate      the serve gate — the one a request's read-verify-refuse compares against at the end
 * @param client    the client record of {@code (partition, clientId)}, or {@code null} when there is none
 */
public record RequestEntry(PartitionState partition, ServeGate gate, ClientRecord client) {
    public RequestEntry {
        Objects.requireNonNull(partition, "partition");
        Objects.requireNonNull(gate, "gate");
    }
}
