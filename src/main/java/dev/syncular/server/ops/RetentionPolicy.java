package dev.syncular.server.ops;

import dev.syncular.server.storage.ClientRecord;
import dev.syncular.server.storage.PartitionState;
import java.time.Duration;
import java.util.List;

/**
 * The §4.6 retention rule: the horizon may advance only up to the lowest cursor of an active client
 * (one whose cursor record moved within the active window), and the newest {@code keepNewest} commits
 * are always retained.
 *
 * <p>The spec's optional force-advance past commits older than the age limit is not applied: laggard
 * active clients are never pruned past.
 */
public record RetentionPolicy(Duration activeWindow, int keepNewest) {
    public static final RetentionPolicy DEFAULTS = new RetentionPolicy(Duration.ofDays(14), 1000);

    /** The sequence to prune through, or {@code -1} when the horizon cannot advance. */
    public long pruneThrough(PartitionState partition, List<ClientRecord> clients, long nowMs) {
        long through = partition.maxCommitSeq() - keepNewest;
        long activeSince = nowMs - activeWindow.toMillis();
        for (ClientRecord c : clients) {
            if (c.updatedAtMs() >= activeSince && c.cursor() >= 0) {
                through = Math.min(through, c.cursor());
            }
        }
        return through > partition.horizonSeq() ? through : -1;
    }
}
