package dev.syncular.server.sync;

import java.time.Duration;
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
 * told how long the first bucket that refuses needs to be above zero again ({@code retryAfterMs}). Rounds without
 * pushes draw nothing. The buckets are {@link RateBuckets}: only the partitions and actors that pushed within the
 * last {@code burst} are held.
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

    private final Limits limits;
    private final RateBuckets partitionOperations;
    private final RateBuckets partitionBytes;
    private final RateBuckets actorOperations;
    private final RateBuckets actorBytes;
    private int sharedBy = 1;

    /** @param nanoClock monotonic nanoseconds ({@link System#nanoTime} outside tests) */
    public PushRate(Limits limits, LongSupplier nanoClock) {
        this.limits = limits;
        this.partitionOperations = new RateBuckets(limits.operationsPerPartition(), limits.burst(), nanoClock);
        this.partitionBytes = new RateBuckets(limits.bytesPerPartition(), limits.burst(), nanoClock);
        this.actorOperations = new RateBuckets(limits.operationsPerActor(), limits.burst(), nanoClock);
        this.actorBytes = new RateBuckets(limits.bytesPerActor(), limits.burst(), nanoClock);
    }

    /**
     * Issue 45, a rate that holds across pods: from now on this pod admits {@code 1 / pods} of each rate and burst, so
     * the pods behind a balancer that spreads a tenant's rounds admit the configured rate together. Called with the
     * number of live pods the shared storage knows of ({@code syncular.fairness.push-rate-scope=deployment}); {@code 1}
     * gives the pod the whole rate again.
     */
    public synchronized void share(int pods) {
        double fraction = 1.0 / Math.max(1, pods);
        partitionOperations.share(fraction);
        partitionBytes.share(fraction);
        actorOperations.share(fraction);
        actorBytes.share(fraction);
        sharedBy = Math.max(1, pods);
    }

    /** How many pods this pod shares the rates with ({@link #share}); {@code 1} when it has them whole. */
    public synchronized int sharedBy() {
        return sharedBy;
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
        Refusal refusal = first(
                wait(PARTITION_OPERATIONS, partitionOperations.waitMs(partition)),
                wait(PARTITION_BYTES, partitionBytes.waitMs(partition)),
                wait(ACTOR_OPERATIONS, actorOperations.waitMs(actor)),
                wait(ACTOR_BYTES, actorBytes.waitMs(actor)));
        if (refusal != Refusal.NONE) {
            return refusal;
        }
        partitionOperations.take(partition, operations);
        partitionBytes.take(partition, bytes);
        actorOperations.take(actor, operations);
        actorBytes.take(actor, bytes);
        return Refusal.NONE;
    }

    private static Refusal wait(String limit, long waitMs) {
        return waitMs == 0 ? Refusal.NONE : new Refusal(limit, waitMs);
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
