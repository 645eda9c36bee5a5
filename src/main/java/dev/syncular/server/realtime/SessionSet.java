package dev.syncular.server.realtime;

import java.util.Collection;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;

/**
 * The hub's session set (§8.6.4 "alongside the session set"): the connections open on this pod, by partition —
 * a session joins when its channel opens (§8.1) and leaves when its connection ends. Fan-out, heartbeats, the
 * presence registry, operator disconnects and the drain all find the pod's sockets here. A partition's set exists
 * while it holds a session; sets and the count are safe to read from any thread.
 */
final class SessionSet {
    private final ConcurrentHashMap<String, Set<RealtimeSession>> byPartition = new ConcurrentHashMap<>();
    private final AtomicInteger open = new AtomicInteger();

    /** {@code s} joins its partition's set. */
    void add(RealtimeSession s) {
        byPartition.compute(s.ctx.partition(), (k, set) -> {
            Set<RealtimeSession> out = set == null ? ConcurrentHashMap.newKeySet() : set;
            out.add(s);
            return out;
        });
        open.incrementAndGet();
    }

    /** {@code s} is closed and leaves its partition's set (a registration arriving later is not recorded). */
    boolean remove(RealtimeSession s) {
        s.closed = true;
        boolean[] removed = {false};
        byPartition.computeIfPresent(s.ctx.partition(), (k, set) -> {
            if (set.remove(s)) {
                open.decrementAndGet();
                removed[0] = true;
            }
            return set.isEmpty() ? null : set;
        });
        return removed[0];
    }

    /** The sessions of {@code partition} now (a live view; empty when it has none). */
    Set<RealtimeSession> of(String partition) {
        Set<RealtimeSession> set = byPartition.get(partition);
        return set == null ? Set.of() : set;
    }

    /** Whether {@code partition} has a set of sessions now. */
    boolean has(String partition) {
        return byPartition.containsKey(partition);
    }

    /** The sessions registered for {@code partition} (per-connection accounting, Appendix B 17). */
    int count(String partition) {
        return of(partition).size();
    }

    /** The connections open on this pod. */
    int open() {
        return open.get();
    }

    /** Every partition's sessions (a live view). */
    Collection<Set<RealtimeSession>> partitions() {
        return byPartition.values();
    }

    /** Runs {@code action} for each session with its partition. */
    void forEach(BiConsumer<String, RealtimeSession> action) {
        byPartition.forEach((partition, set) -> set.forEach(s -> action.accept(partition, s)));
    }

    /** Socket rounds (§8.7) in flight on this pod's connections. */
    int roundsInFlight() {
        int n = 0;
        for (Set<RealtimeSession> set : byPartition.values()) {
            for (RealtimeSession s : set) {
                n += s.roundInFlight() ? 1 : 0;
            }
        }
        return n;
    }
}
