package dev.syncular.server.realtime;

import dev.syncular.server.wire.realtime.ControlMessage;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The presence publish rate of one connection (§8.6, issue 45): a token bucket of {@code perSecond} publishes a
 * second with a burst of {@code burst}. A publish that finds the bucket empty is not refused but held, the latest
 * document per scope key replacing any held before it, as the fan-out coalesces deltas: when the next token is
 * there the held documents go out, each taking one. A loop publishing thousands of documents a second thus reaches
 * the other pods' NOTIFY queue and its scope-mates at the configured rate, with its newest state, never its
 * backlog. A leave is never held (it ends what a held document would announce, so it drops that document).
 * Guarded by its own monitor: the connection's event loop admits, the hub's release timer releases. {@link #OFF} is
 * shared by every connection without a cap and is never locked.
 */
final class PresenceRate {
    /** No cap: every publish goes out at once. */
    static final PresenceRate OFF = new PresenceRate(0, 0);

    private final double perNano;
    private final double burst;
    private double tokens;
    private long lastNanos = Long.MIN_VALUE;
    private final Map<String, ControlMessage.PresencePublish> held = new LinkedHashMap<>();
    /** Whether a timer is set to release the held documents. */
    boolean releaseScheduled;

    /** @param perSecond publishes a second, {@code 0} for no cap */
    PresenceRate(double perSecond, int burst) {
        this.perNano = perSecond / 1e9;
        this.burst = Math.max(1, burst);
        this.tokens = this.burst;
    }

    boolean off() {
        return perNano == 0;
    }

    /**
     * Whether {@code publish} may go out now (taking a token); otherwise it is held, replacing what was held for its
     * key, and {@code false}.
     */
    boolean admit(ControlMessage.PresencePublish publish, long nowNanos) {
        if (off()) {
            return true;
        }
        if (publish.isLeave()) {
            held.remove(publish.scopeKey());
            return true;
        }
        refill(nowNanos);
        if (held.isEmpty() && tokens >= 1) {
            tokens -= 1;
            return true;
        }
        held.remove(publish.scopeKey()); // the newest document moves to the end of the queue
        held.put(publish.scopeKey(), publish);
        return false;
    }

    /** The held documents that may go out now, each taking a token, oldest key first. */
    List<ControlMessage.PresencePublish> release(long nowNanos) {
        refill(nowNanos);
        List<ControlMessage.PresencePublish> out = new ArrayList<>();
        var it = held.values().iterator();
        while (it.hasNext() && tokens >= 1) {
            out.add(it.next());
            it.remove();
            tokens -= 1;
        }
        return out;
    }

    /** Whether documents are held. */
    boolean holding() {
        return !held.isEmpty();
    }

    /** Milliseconds until the next token, at least 1. */
    long millisToNextToken(long nowNanos) {
        refill(nowNanos);
        double missing = Math.max(0, 1 - tokens);
        return Math.max(1, (long) Math.ceil(missing / perNano / 1e6));
    }

    private void refill(long nowNanos) {
        if (lastNanos != Long.MIN_VALUE) {
            tokens = Math.min(burst, tokens + (nowNanos - lastNanos) * perNano);
        }
        lastNanos = nowNanos;
    }
}
