package dev.syncular.server.storage;

import java.util.List;
import java.util.Objects;

/**
 * One commit read back from the log (§2.1, §4.5). In a {@link CommitWindow} the change list is already
 * filtered to the query's table and scopes, so it may hold fewer changes than were written.
 *
 * <p>{@code traceParent} is the W3C {@code traceparent} of the sampled push span that made the commit, kept so the
 * realtime fan-out on any pod links to it, or {@link #UNTRACED}: the push was not traced, or the read does not
 * carry it (a pull's {@link CommitWindow} never does; {@link SyncStorage#readCommit} and the recent commits do).
 */
public record StoredCommit(
        long commitSeq,
        long createdAtMs,
        String actorId,
        String clientId,
        String clientCommitId,
        List<StoredChange> changes,
        String traceParent) {
    /** The {@code traceParent} of a commit whose push was not traced (or a read that does not carry it). */
    public static final String UNTRACED = "";

    public StoredCommit {
        Objects.requireNonNull(actorId, "actorId");
        Objects.requireNonNull(traceParent, "traceParent");
        changes = List.copyOf(changes);
    }
}
