package dev.syncular.server.sync;

import java.time.Duration;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * Push operations and pushed bytes per second, per partition and per actor, on one pod (issue 45: one tenant's push
 * flood must not take the commit path's time from the others). Four token buckets — operations and bytes of the
 * partition, operations and bytes of the actor within it — each refilled at its rate and holding at most
 * {@code burst} of it.
 *
 * <p>A round with pushes is admitted when every bucket it draws from is above zero, and then takes its whole cost,
 * which may leave a bucket in debt: one commit of any size (within the request's own caps) is never refused for its
 * size alone, and the debt is repaid before the next is admitted, so the rate holds on average. A refused round is
 * told how long the emptiest bucket needs to be above zero again ({@code retryAfterMs}). Rounds without pushes draw
 * nothing. A bucket back at its capacity carries no information and is dropped, so the pod holds buckets only for
 * the partitions and actors that pushed within the last {@code burst}: about 120 bytes each.
 */
public final class PushRate {
    /** No rate limit (the engine's default). */
    public static final PushRate OFF = new PushRate(new Limits(0, 0, 0, 0, Duration.ofSeconds(1)), System::nanoTime);

    public static final String PARTITION_OPERATIONS = "partition_push_operations";
    public static final String PARTITION_BYTES = "partition_push_bytes";
    public static final String ACTOR_OPERATIONS = "actor_push_operations";
    public static final String ACTOR_BYTES = "actor_push_bytes";

    /** Rates per second ({@code 0} = that bucket off) and how much of them a bucket holds. */
    public record Limits(
            double operationsPerPartition,
            double bytesPerPartition,
            double operationsPerActor,
            double bytesPerActor,
            Duration burst) {
        public Limits {
            if (operationsPerPartition < 0 || bytesPerPartition < 0 || operationsPerActor < 0 || bytesPerActor < 0) {
                throw new IllegalArgumentException("push rates are 0 (off) or positive");
            }
            if (burst.isNegative() || burst.isZero()) {
                throw new IllegalArgumentException("the push burst is more than 0s");
            }
        }

        boolean off() {
            return operationsPerPartition == 0
                    && bytesPerPartition == 0
                    && operationsPerActor == 0
                    && bytesPerActor == 0;
        }
    }

    /** A refusal: the limit's name and when the round may come back; {@link #NONE} = admitted. */
    public record Refusal(String limit, long retryAfterMs) {
        public static final Refusal NONE = new Refusal("", 0);
    }

    /** Tokens of one partition or actor: operations and bytes, as of {@code atNanos}. */
    private static final class Bucket {
        double operations;
        double bytes;
        long atNanos;

        Bucket(double operations, double bytes, long atNanos) {
            this.operations = operations;
            this.bytes = bytes;
            this.atNanos = atNanos;
        }
    }

    private final Limits limits;
    private final LongSupplier nanoClock;
    private final Map<String, Bucket> partitions = new HashMap<>();
    private final Map<String, Bucket> actors = new HashMap<>();
    private int sinceSweep;

    /** @param nanoClock monotonic nanoseconds ({@link System#nanoTime} outside tests) */
    public PushRate(Limits limits, LongSupplier nanoClock) {
        this.limits = limits;
        this.nanoClock = nanoClock;
    }

    public Limits limits() {
        return limits;
    }

    boolean off() {
        return limits.off();
    }

    /**
     * Admits a round pushing {@code operations} operations of {@code bytes} bytes and takes them from the buckets of
     * {@code partition} and {@code actor} (the actor's key within its partition), or names the bucket that refuses
     * it, taking nothing. A round without operations is always admitted.
     */
    synchronized Refusal take(String partition, String actor, int operations, long bytes) {
        if (operations == 0 || limits.off()) {
            return Refusal.NONE;
        }
        long now = nanoClock.getAsLong();
        if (++sinceSweep >= 1024) {
            sinceSweep = 0;
            sweep(partitions, limits.operationsPerPartition(), limits.bytesPerPartition(), now);
            sweep(actors, limits.operationsPerActor(), limits.bytesPerActor(), now);
        }
        Bucket p = bucket(partitions, partition, limits.operationsPerPartition(), limits.bytesPerPartition(), now);
        Bucket a = bucket(actors, actor, limits.operationsPerActor(), limits.bytesPerActor(), now);
        Refusal refusal = first(
                wait(PARTITION_OPERATIONS, p.operations, limits.operationsPerPartition()),
                wait(PARTITION_BYTES, p.bytes, limits.bytesPerPartition()),
                wait(ACTOR_OPERATIONS, a.operations, limits.operationsPerActor()),
                wait(ACTOR_BYTES, a.bytes, limits.bytesPerActor()));
        if (refusal != Refusal.NONE) {
            return refusal;
        }
        p.operations -= limits.operationsPerPartition() > 0 ? operations : 0;
        p.bytes -= limits.bytesPerPartition() > 0 ? bytes : 0;
        a.operations -= limits.operationsPerActor() > 0 ? operations : 0;
        a.bytes -= limits.bytesPerActor() > 0 ? bytes : 0;
        return Refusal.NONE;
    }

    /** The bucket of {@code key} refilled to {@code now} (a new one full). */
    private Bucket bucket(Map<String, Bucket> buckets, String key, double opsRate, double bytesRate, long now) {
        Bucket b = buckets.get(key);
        if (b == null) {
            b = new Bucket(capacity(opsRate), capacity(bytesRate), now);
            buckets.put(key, b);
            return b;
        }
        refill(b, opsRate, bytesRate, now);
        return b;
    }

    private void refill(Bucket b, double opsRate, double bytesRate, long now) {
        double seconds = Math.max(0, now - b.atNanos) / 1e9;
        b.operations = Math.min(capacity(opsRate), b.operations + opsRate * seconds);
        b.bytes = Math.min(capacity(bytesRate), b.bytes + bytesRate * seconds);
        b.atNanos = now;
    }

    /** Drops the buckets that are full again: they say nothing a new bucket would not. */
    private void sweep(Map<String, Bucket> buckets, double opsRate, double bytesRate, long now) {
        for (Iterator<Bucket> it = buckets.values().iterator(); it.hasNext(); ) {
            Bucket b = it.next();
            refill(b, opsRate, bytesRate, now);
            if (b.operations >= capacity(opsRate) && b.bytes >= capacity(bytesRate)) {
                it.remove();
            }
        }
    }

    private double capacity(double rate) {
        return rate * limits.burst().toNanos() / 1e9;
    }

    /** A refusal by {@code limit} when its bucket is not above zero: until it is, at {@code rate}. */
    private static Refusal wait(String limit, double tokens, double rate) {
        if (rate == 0 || tokens > 0) {
            return Refusal.NONE;
        }
        return new Refusal(limit, Math.max(1, (long) Math.ceil((-tokens + 1) * 1000 / rate)));
    }

    private static Refusal first(Refusal... refusals) {
        for (Refusal r : refusals) {
            if (r != Refusal.NONE) {
                return r;
            }
        }
        return Refusal.NONE;
    }
}
