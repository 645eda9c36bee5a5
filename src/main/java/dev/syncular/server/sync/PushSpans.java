package dev.syncular.server.sync;

import io.opentelemetry.api.trace.SpanContext;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The span contexts of the commits this process pushed lately, by partition, client id and client commit id (§2.3:
 * what a stored commit carries), so the realtime fan-out of a commit on this pod links to the push that made it. At
 * most {@value #CAPACITY} entries: the oldest is dropped first, whether or not a fan-out read it. Only recording
 * spans are kept: with tracing off nothing is stored.
 */
final class PushSpans {
    static final int CAPACITY = 4096;

    private final ConcurrentHashMap<String, SpanContext> byCommit = new ConcurrentHashMap<>();
    private final AtomicReferenceArray<String> order = new AtomicReferenceArray<>(CAPACITY);
    private final AtomicLong next = new AtomicLong();

    void remember(String partition, String clientId, String clientCommitId, SpanContext push) {
        if (!push.isValid() || !push.isSampled()) {
            return;
        }
        String key = key(partition, clientId, clientCommitId);
        byCommit.put(key, push);
        String evicted = order.getAndSet((int) (next.getAndIncrement() % CAPACITY), key);
        if (evicted != null && !evicted.equals(key)) {
            byCommit.remove(evicted);
        }
    }

    /** The push span of the commit, or an invalid context when this process did not push it (lately). */
    SpanContext recall(String partition, String clientId, String clientCommitId) {
        if (byCommit.isEmpty() || clientId == null || clientCommitId == null) {
            return SpanContext.getInvalid();
        }
        SpanContext c = byCommit.get(key(partition, clientId, clientCommitId));
        return c == null ? SpanContext.getInvalid() : c;
    }

    private static String key(String partition, String clientId, String clientCommitId) {
        return partition.length() + ":" + partition + clientId.length() + ":" + clientId + clientCommitId;
    }
}
