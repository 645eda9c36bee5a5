package dev.syncular.server.realtime;

import java.util.concurrent.ConcurrentHashMap;

/**
 * The notified commits of each partition that are heard and not fanned out yet, with when each was heard — the
 * fan-out backlog a partition's connected clients wait behind ({@link Staleness#FANOUT_BACKLOG}). A partition's
 * commits are fanned out in notification order ({@link DeltaDelivery}), so each partition is a queue of heard
 * times: the oldest is the head. A partition's entry exists while it has a commit pending.
 */
final class PendingFanouts {
    private final ConcurrentHashMap<String, Times> byPartition = new ConcurrentHashMap<>();

    /** A commit of {@code partition} was heard at {@code atMs} and waits for its fan-out. */
    void heard(String partition, long atMs) {
        byPartition.compute(partition, (k, q) -> {
            Times out = q == null ? new Times() : q;
            out.add(atMs);
            return out;
        });
    }

    /** The oldest pending commit of {@code partition} was fanned out (or failed to be). */
    void done(String partition) {
        byPartition.computeIfPresent(partition, (k, q) -> q.poll() ? null : q);
    }

    /** When the oldest pending commit of {@code partition} was heard; {@code 0} when none is pending. */
    long oldestMs(String partition) {
        Times q = byPartition.get(partition);
        return q == null ? 0 : q.peek();
    }

    /** A queue of epoch milliseconds in a growing ring. */
    private static final class Times {
        private long[] ring = new long[4];
        private int head;
        private int size;

        synchronized void add(long ms) {
            if (size == ring.length) {
                long[] bigger = new long[size * 2];
                for (int i = 0; i < size; i++) {
                    bigger[i] = ring[(head + i) % ring.length];
                }
                ring = bigger;
                head = 0;
            }
            ring[(head + size) % ring.length] = ms;
            size++;
        }

        /** Drops the oldest; whether the queue is empty now. */
        synchronized boolean poll() {
            if (size > 0) {
                head = (head + 1) % ring.length;
                size--;
            }
            return size == 0;
        }

        synchronized long peek() {
            return size == 0 ? 0 : ring[head];
        }
    }
}
