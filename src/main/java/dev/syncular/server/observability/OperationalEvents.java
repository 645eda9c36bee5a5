package dev.syncular.server.observability;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.operations.OperationObserver;
import dev.syncular.server.sync.SyncObserver;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The event tail of the admin API ({@code GET <mount>/admin/events}): the last
 * {@code syncular.admin.event-buffer} operational events of THIS pod — rejected and conflicted commits (§6.3),
 * serve-gate refusals (§2.4) and pruning passes that removed commits (§4.6) — in a bounded in-memory ring. Each
 * pod keeps its own; nothing is shared or persisted, and a restart empties it. Metrics are the cross-pod view.
 */
@ApplicationScoped
public class OperationalEvents implements SyncObserver, OperationObserver {
    /** Event kinds. */
    public static final String REJECTION = "rejection";

    public static final String CONFLICT = "conflict";
    public static final String GATE_REFUSAL = "gate_refusal";
    public static final String PRUNE = "prune";
    /** A remote operation (REMOTE.md) answered with an error: its code, the operation id and the binding. */
    public static final String OPERATION_FAILED = "operation_failed";

    /**
     * One event: {@code seq} numbers this pod's events from 1 (a gap means the ring dropped older ones);
     * {@code code} is a §10 code or {@code null}; {@code details} carries ids and counts.
     */
    public record Event(long seq, long atMs, String kind, String code, String partition, Map<String, Object> details) {}

    private final int capacity;
    private final ArrayDeque<Event> ring;
    private long seq;

    @Inject
    public OperationalEvents(AdminConfig config) {
        this.capacity = Math.max(1, config.eventBuffer());
        this.ring = new ArrayDeque<>(Math.min(capacity, 1024));
    }

    private synchronized void add(String kind, String code, String partition, Map<String, Object> details) {
        if (ring.size() == capacity) {
            ring.removeFirst();
        }
        ring.addLast(new Event(++seq, System.currentTimeMillis(), kind, code, partition, details));
    }

    /** How many events the ring keeps ({@code syncular.admin.event-buffer}). */
    public int capacity() {
        return capacity;
    }

    /** The newest {@code limit} events, newest first. */
    public synchronized List<Event> tail(int limit) {
        List<Event> out = new ArrayList<>(Math.min(limit, ring.size()));
        var it = ring.descendingIterator();
        while (it.hasNext() && out.size() < limit) {
            out.add(it.next());
        }
        return out;
    }

    @Override
    public void commitPushed(Commit commit) {
        if (commit.outcome() == CommitOutcome.REJECTED || commit.outcome() == CommitOutcome.CONFLICTED) {
            Map<String, Object> details = new LinkedHashMap<>();
            details.put("clientId", commit.clientId());
            details.put("clientCommitId", commit.clientCommitId());
            details.put("operations", commit.operations());
            add(
                    commit.outcome() == CommitOutcome.REJECTED ? REJECTION : CONFLICT,
                    commit.code(),
                    commit.partition(),
                    details);
        }
    }

    @Override
    public void gateRefused(String partition, String reason) {
        add(GATE_REFUSAL, ErrorCode.SCHEMA_NOT_READY.code, partition, Map.of("reason", reason));
    }

    /**
     * A §6.9 reaction lifecycle event of this pod's delivery worker ({@code reaction.completed},
     * {@code reaction.retried}, {@code reaction.dead_lettered}), with the failure code when there is one.
     */
    public void reaction(String event, String code, String partition, long reactionId, String type, int attempt) {
        add(event, code, partition, Map.of("reactionId", reactionId, "type", type, "attempt", attempt));
    }

    @Override
    public void answered(String operation, Binding binding, String outcome, long nanos) {}

    @Override
    public void failed(String operation, Binding binding, String code, String partition) {
        add(OPERATION_FAILED, code, partition, Map.of("operation", operation, "binding", binding.tag()));
    }

    /** A pruning pass that removed commits. */
    public void pruned(long removedCommits, long horizonLag) {
        add(PRUNE, null, null, Map.of("removedCommits", removedCommits, "horizonLagCommits", horizonLag));
    }
}
