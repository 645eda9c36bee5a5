package dev.syncular.server.jobs;

import dev.syncular.server.storage.PartitionState;
import dev.syncular.server.storage.RetentionInputs;
import java.time.Duration;

/**
 * The §4.6 retention rule: the horizon may advance only up to the lowest cursor of an active client
 * (one whose cursor record moved within the active window), and the newest {@code keepNewest} commits
 * are always retained.
 *
 * <p>The spec's optional force-advance past commits older than the age limit is not applied: laggard
 * active clients are never pruned past.
 *
 * <p>Push results (§2.3 idempotency records) are kept for {@code pushResultRetention} after they were written.
 * §2.3 allows pruning them ("including after the persisted result has been pruned": a client never reuses a
 * {@code clientCommitId}), and §7.2.1 makes a client journal every final result in the same transaction that
 * removes the commit from its outbox, so a result the client received is never asked for again. The retention
 * only covers lost acknowledgements: a client that replays a commit later than this gets it applied as a new
 * commit (its conflict checks still apply). The default, 30 days, is §4.6's age force limit: beyond it the
 * spec lets a server drop a client's log position as well.
 */
public record RetentionPolicy(Duration activeWindow, int keepNewest, Duration pushResultRetention) {
    public static final RetentionPolicy DEFAULTS = new RetentionPolicy(Duration.ofDays(14), 1000, Duration.ofDays(30));

    /** Client records that moved at or after this time are active. */
    public long activeSince(long nowMs) {
        return nowMs - activeWindow.toMillis();
    }

    /**
     * The sequence to prune through, or {@code -1} when the horizon cannot advance: the newest {@code keepNewest}
     * commits stay, and so does everything above the lowest cursor of an active client.
     */
    public long pruneThrough(RetentionInputs inputs) {
        PartitionState partition = inputs.partition();
        long through = partition.maxCommitSeq() - keepNewest;
        if (inputs.lowestActiveCursor() != RetentionInputs.NO_ACTIVE_CURSOR) {
            through = Math.min(through, inputs.lowestActiveCursor());
        }
        return through > partition.horizonSeq() ? through : -1;
    }

    /** Push results created before this time may be deleted. */
    public long pushResultsCreatedBefore(long nowMs) {
        return nowMs - pushResultRetention.toMillis();
    }
}
