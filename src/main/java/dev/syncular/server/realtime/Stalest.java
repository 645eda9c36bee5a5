package dev.syncular.server.realtime;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * A snapshot of this pod's connected clients that are behind: each client's lag is the age of the oldest commit it
 * is owed — one its partition's fan-out has not reached yet ({@link Staleness#FANOUT_BACKLOG}, from when the pod
 * heard it), or one that went to it only as a wake-up ({@link RealtimeSession#owe}, from the commit's creation) —
 * with the part of the path that holds it. A client that has everything it is owed is not listed.
 *
 * @param clients the {@code n} stalest clients, stalest first
 * @param partitions the {@code n} stalest partitions (their stalest client's lag and reason), stalest first
 * @param overObjective per reason, the clients behind by more than the objective (every reason present, 0 or more)
 * @param connections the connections open on this pod
 */
public record Stalest(
        List<StaleClient> clients,
        List<StalePartition> partitions,
        Map<Staleness, Integer> overObjective,
        int connections) {

    /** One connected client that is behind. */
    public record StaleClient(String partition, String clientId, String actorId, long lagMs, Staleness reason) {}

    /** A partition's stalest connected client on this pod, and how many of its clients are behind. */
    public record StalePartition(String partition, long lagMs, Staleness reason, int clientsBehind) {}

    private static final Comparator<StaleClient> BY_LAG = Comparator.comparingLong(StaleClient::lagMs);

    /**
     * Reads every session of {@code sessions} once, without its monitor: O(sessions × log n), an entry per partition
     * and per client that is behind.
     */
    static Stalest of(SessionSet sessions, PendingFanouts pending, int n, long objectiveMs, long nowMs) {
        PriorityQueue<StaleClient> top = new PriorityQueue<>(n + 1, BY_LAG);
        Map<String, StalePartition> byPartition = new HashMap<>();
        Map<String, Long> backlog = new HashMap<>();
        Map<Staleness, Integer> over = new EnumMap<>(Staleness.class);
        for (Staleness r : Staleness.values()) {
            over.put(r, 0);
        }
        sessions.forEach((partition, s) -> {
            long lag = 0;
            Staleness reason = null;
            long owed = s.owedSinceMs();
            if (owed > 0) {
                lag = Math.max(0, nowMs - owed);
                reason = s.owedFor();
            }
            long heard = backlog.computeIfAbsent(partition, pending::oldestMs);
            if (heard > 0 && (reason == null || nowMs - heard > lag)) {
                lag = Math.max(0, nowMs - heard);
                reason = Staleness.FANOUT_BACKLOG;
            }
            if (reason == null) {
                return;
            }
            if (lag > objectiveMs) {
                over.merge(reason, 1, Integer::sum);
            }
            StaleClient c = new StaleClient(partition, s.clientId, s.ctx.actorId(), lag, reason);
            top.add(c);
            if (top.size() > n) {
                top.poll();
            }
            StalePartition p = byPartition.get(partition);
            byPartition.put(
                    partition,
                    p == null
                            ? new StalePartition(partition, lag, reason, 1)
                            : lag > p.lagMs()
                                    ? new StalePartition(partition, lag, reason, p.clientsBehind() + 1)
                                    : new StalePartition(partition, p.lagMs(), p.reason(), p.clientsBehind() + 1));
        });
        List<StaleClient> clients = new ArrayList<>(top);
        clients.sort(BY_LAG.reversed().thenComparing(StaleClient::partition).thenComparing(StaleClient::clientId));
        List<StalePartition> partitions = new ArrayList<>(byPartition.values());
        partitions.sort(
                Comparator.comparingLong(StalePartition::lagMs).reversed().thenComparing(StalePartition::partition));
        if (partitions.size() > n) {
            partitions = new ArrayList<>(partitions.subList(0, n));
        }
        return new Stalest(List.copyOf(clients), List.copyOf(partitions), Map.copyOf(over), sessions.open());
    }
}
