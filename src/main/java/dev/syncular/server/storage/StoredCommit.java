package dev.syncular.server.storage;

import java.util.List;
import java.util.Objects;

/**
 * One commit read back from the log (§2.1, §4.5). In a {@link CommitWindow} the change list is already
 * filtered to the query's table and scopes, so it may hold fewer changes than were written.
 */
public record StoredCommit(
        long commitSeq,
        long createdAtMs,
        String actorId,
        String clientId,
        String clientCommitId,
        List<StoredChange> changes) {
    public StoredCommit {
        Objects.requireNonNull(actorId, "actorId");
        changes = List.copyOf(changes);
    }
}
