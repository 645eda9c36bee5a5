package dev.syncular.server.sync;

import java.time.Duration;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * Token buckets of one rate by key (a partition, an actor), on one pod (issue 45): each refilled at
 * {@code perSecond} and holding at most {@code burst} of it. A use is admitted while its key's bucket is above zero
 * and then takes its whole cost, which may leave the bucket in debt — a single use of any size is never refused for
 * its size alone, and the debt is repaid before the next — so the rate holds on average. A bucket back at full
 * carries no information and is dropped (every 1,024 uses), so only the keys used within the last {@code burst} are
 * held: about 100 bytes each. Not thread-safe: its owner locks.
 */
public final class RateBuckets {
    private final double fullPerSecond;
    private final double fullCapacity;
    private double perSecond;
    private double capacity;
    private final LongSupplier nanoClock;
    private final Map<String, double[]> buckets = new HashMap<>(); // key → {tokens, at nanos}
    private int sinceSweep;

    /** @param perSecond the rate; {@code 0}: off (every use admitted, nothing held) */
    public RateBuckets(double perSecond, Duration burst, LongSupplier nanoClock) {
        if (perSecond < 0 || burst.isNegative() || burst.isZero()) {
            throw new IllegalArgumentException("a rate is 0 (off) or positive, its burst more than 0s");
        }
        this.fullPerSecond = perSecond;
        this.fullCapacity = perSecond * burst.toNanos() / 1e9;
        this.perSecond = fullPerSecond;
        this.capacity = fullCapacity;
        this.nanoClock = nanoClock;
    }

    public boolean off() {
        return fullPerSecond == 0;
    }

    /**
     * Keeps {@code fraction} (in (0, 1]) of the rate and of the burst from now on: this pod's share of a rate that holds
     * across the pods ({@link PushRate#share}). Buckets above the new capacity are cut to it at their next use.
     */
    public void share(double fraction) {
        if (!(fraction > 0 && fraction <= 1)) {
            throw new IllegalArgumentException("a share is in (0, 1]");
        }
        perSecond = fullPerSecond * fraction;
        capacity = fullCapacity * fraction;
    }

    /** Milliseconds until {@code key}'s bucket is above zero again; {@code 0} when it is (or the rate is off). */
    public long waitMs(String key) {
        if (off()) {
            return 0;
        }
        double tokens = refilled(key, nanoClock.getAsLong())[0];
        return tokens > 0 ? 0 : Math.max(1, (long) Math.ceil((-tokens + 1) * 1000 / perSecond));
    }

    /** Takes {@code amount} from {@code key}'s bucket (after {@link #waitMs} admitted it). */
    public void take(String key, double amount) {
        if (!off()) {
            refilled(key, nanoClock.getAsLong())[0] -= amount;
        }
    }

    private double[] refilled(String key, long now) {
        if (++sinceSweep >= 1024) {
            sinceSweep = 0;
            for (Iterator<double[]> it = buckets.values().iterator(); it.hasNext(); ) {
                double[] b = it.next();
                refill(b, now);
                if (b[0] >= capacity) {
                    it.remove();
                }
            }
        }
        double[] b = buckets.get(key);
        if (b == null) {
            b = new double[] {capacity, now};
            buckets.put(key, b);
        } else {
            refill(b, now);
        }
        return b;
    }

    private void refill(double[] b, long now) {
        b[0] = Math.min(capacity, b[0] + perSecond * Math.max(0, now - (long) b[1]) / 1e9);
        b[1] = now;
    }
}
