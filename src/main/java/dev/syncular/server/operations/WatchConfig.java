package dev.syncular.server.operations;

import java.time.Duration;

/**
 * The bounds of the REMOTE.md §6 watch socket ({@code syncular.operations.watch.*}, {@link OperationsConfig.Watch}).
 *
 * @param maxPerConnection  active watches one socket may hold; one more is answered {@code sync.rate_limited}
 * @param maxPerPod         active watches of every socket of the pod together; likewise
 * @param maxPerPartition   active watches of one partition's sockets on the pod; likewise
 * @param minRerunInterval  the shortest time between the starts of two runs of one watch: commits inside it
 *                          coalesce into one rerun at its end (a hot table cannot become a query storm)
 * @param maxConcurrentRuns watch runs of the pod executing at once; the others wait, each partition's oldest
 *                          first and the partitions in turn
 * @param maxConcurrentRunsPerPartition watch runs of one partition executing at once on the pod
 * @param maxMessageBytes   the largest client message; a larger one is {@code operation.invalid_request}
 */
public record WatchConfig(
        int maxPerConnection,
        int maxPerPod,
        int maxPerPartition,
        Duration minRerunInterval,
        int maxConcurrentRuns,
        int maxConcurrentRunsPerPartition,
        long maxMessageBytes) {
    public WatchConfig {
        if (maxPerConnection < 1
                || maxPerPod < 1
                || maxPerPartition < 1
                || maxConcurrentRuns < 1
                || maxConcurrentRunsPerPartition < 1
                || maxMessageBytes < 1) {
            throw new IllegalArgumentException("watch caps must be at least 1");
        }
        if (minRerunInterval.isNegative()) {
            throw new IllegalArgumentException("the watch rerun interval must not be negative");
        }
    }
}
