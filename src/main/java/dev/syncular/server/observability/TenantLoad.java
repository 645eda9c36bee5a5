package dev.syncular.server.observability;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.storage.StorageBusy;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.TenantLoadRow;
import dev.syncular.server.sync.RoundAdmission;
import dev.syncular.server.sync.SyncObserver;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.LongSupplier;
import java.util.function.ToLongFunction;

/**
 * This pod's load per partition (a partition is a tenant) over the last minute, so the loud ones can be named
 * without a series per partition: four figures per partition — <b>database time</b>, <b>committed bytes</b>,
 * <b>fan-out bytes</b> and <b>refusals</b> by reason — summed over a sliding window of {@value #BUCKETS} buckets of
 * {@value #BUCKET_MS} ms (the current bucket and the five before it: the last 50 to 60 seconds).
 *
 * <ul>
 *   <li>Database time: the wall time of each admitted sync round of the partition, from its entry read to its last
 *       statement ({@link SyncObserver#roundEnded}). A round's time is spent almost entirely waiting for PostgreSQL —
 *       the entry read, the push transactions (their wait for the partition's lock included: a partition that
 *       serializes its own pushes pays for it), the pull's reads and the exit round trip — so it stands for the
 *       partition's database time; the CPU of planning and encoding counts too.
 *   <li>Committed bytes: the pushed size (§6.1: table, row id and sparse row payload of each operation) of every
 *       applied commit ({@link SyncObserver#commitPushed}).
 *   <li>Fan-out bytes: realtime deltas (§8.2) written to the partition's sockets on this pod, as encoded.
 *   <li>Refusals, by reason: the fairness limits ({@link RoundAdmission#LIMITS}), the transient storage refusals a
 *       round is answered {@code sync.rate_limited} with ({@code queue_full}, {@code lock_timeout},
 *       {@code statement_timeout}, …), and {@code presence_coalesced} (§8.6 publishes held past a connection's rate).
 *       A request refused before it is authenticated (the buffer budget's {@code memory_budget}, a wrong credential)
 *       has no partition yet and is not counted here.
 * </ul>
 *
 * <p><b>Bounded memory.</b> Each bucket holds at most {@value #MAX_PARTITIONS} partitions: once it is full, the
 * {@value #EVICT} quietest are dropped in one pass — those whose best rank in any of the four figures is the worst
 * (a partition loud in one figure stays) — so a new partition always finds room and eviction costs a sort of the
 * bucket every {@value #EVICT} new partitions. An entry is about 330 bytes (map node, figures, the refusal counts)
 * plus its partition id (40 bytes and 2 per character at most), so the window holds at most
 * {@value #BUCKETS} × ({@value #MAX_PARTITIONS} + {@value #SLACK}) = 6,600 entries: at most about 2.9 MB with
 * 32-character ids (5.8 MB with 256-character ids). A partition evicted from a bucket loses that bucket's figures; one that stays
 * loud is back at once.
 *
 * <p><b>Cost.</b> An update is a hash lookup and a few additions under the partition's own monitor (no lock shared
 * between partitions, no I/O, no allocation once the partition is in the bucket): safe on the event loop, on the
 * path of every round. {@link #top} (the publishing job's, every few seconds) sums the window.
 */
@ApplicationScoped
public class TenantLoad implements SyncObserver {
    static final int BUCKETS = 6;
    static final long BUCKET_MS = 10_000;
    static final int MAX_PARTITIONS = 1_000;
    static final int EVICT = 100;
    /** Entries a bucket may take beyond {@link #MAX_PARTITIONS} while another thread evicts. */
    static final int SLACK = 100;

    /** The refusal reasons counted: a closed set (anything else is {@code other}), in this order. */
    public static final List<String> REASONS = reasons();

    private static List<String> reasons() {
        List<String> all = new ArrayList<>(RoundAdmission.LIMITS);
        all.addAll(List.of(
                "queue_full",
                "lock_timeout",
                "statement_timeout",
                "deadlock",
                "serialization_failure",
                "too_many_connections",
                "pool_wait_queue_full",
                "pool_wait_timeout",
                "storage_unavailable",
                "read_only",
                "presence_coalesced",
                "other"));
        return List.copyOf(all);
    }

    private static final Map<String, Integer> REASON_INDEX = new HashMap<>();

    static {
        for (int i = 0; i < REASONS.size(); i++) {
            REASON_INDEX.put(REASONS.get(i), i);
        }
    }

    private static final int OTHER = REASONS.size() - 1;
    private static final int PRESENCE = REASON_INDEX.get("presence_coalesced");

    private final LongSupplier clockMs;
    private final StorageBusy storageBusy;
    private final AtomicReferenceArray<Bucket> ring = new AtomicReferenceArray<>(BUCKETS);

    @Inject
    public TenantLoad(StorageBusy storageBusy) {
        this(System::currentTimeMillis, storageBusy);
    }

    TenantLoad(LongSupplier clockMs, StorageBusy storageBusy) {
        this.clockMs = clockMs;
        this.storageBusy = storageBusy;
    }

    // ---- what is told ----------------------------------------------------------------------------------

    @Override
    public void roundEnded(String partition, String outcome, Throwable failure, long nanos) {
        int refusal = failure == null ? -1 : refusal(failure);
        Figures f = figures(partition);
        if (f != null) {
            f.add(nanos, 0, 0, refusal);
        }
    }

    @Override
    public void commitPushed(Commit commit) {
        if (commit.outcome() == CommitOutcome.APPLIED && commit.bytes() > 0) {
            Figures f = figures(commit.partition());
            if (f != null) {
                f.add(0, commit.bytes(), 0, -1);
            }
        }
    }

    /** A round of {@code partition} refused by a fairness limit before it ran ({@link RoundAdmission}). */
    public void refused(String partition, String limit) {
        Figures f = figures(partition);
        if (f != null) {
            f.add(0, 0, 0, REASON_INDEX.getOrDefault(limit, OTHER));
        }
    }

    /** A realtime delta of {@code bytes} written to a socket of {@code partition} (§8.2). */
    public void fanout(String partition, long bytes) {
        Figures f = figures(partition);
        if (f != null) {
            f.add(0, 0, bytes, -1);
        }
    }

    /** A presence publish of a connection of {@code partition} held past its rate (§8.6). */
    public void presenceCoalesced(String partition) {
        Figures f = figures(partition);
        if (f != null) {
            f.add(0, 0, 0, PRESENCE);
        }
    }

    /**
     * The reason index of a failed round answered {@code sync.rate_limited}: a {@link SyncError} of that code, or a
     * transient storage failure ({@link StorageBusy}); {@code -1} for any other failure.
     */
    private int refusal(Throwable failure) {
        Map<String, Object> details;
        if (failure instanceof SyncError e) {
            if (e.code() != ErrorCode.RATE_LIMITED) {
                return -1;
            }
            details = e.details();
        } else {
            StorageException busy = storageBusy.busy(failure);
            if (busy == null) {
                return -1;
            }
            details = busy.details();
        }
        Object reason = details == null ? null : details.get("reason");
        return reason == null ? OTHER : REASON_INDEX.getOrDefault(reason.toString(), OTHER);
    }

    // ---- the window ------------------------------------------------------------------------------------

    /** The figures of {@code partition} in the current bucket; {@code null} when the bucket is full and evicting. */
    private Figures figures(String partition) {
        Bucket b = bucket(Math.floorDiv(clockMs.getAsLong(), BUCKET_MS));
        Figures f = b.byPartition.get(partition);
        if (f != null) {
            return f;
        }
        if (b.byPartition.size() >= MAX_PARTITIONS) {
            b.evict();
            if (b.byPartition.size() >= MAX_PARTITIONS + SLACK) {
                return null; // another thread is evicting: this update is dropped, memory stays bounded
            }
        }
        return b.byPartition.computeIfAbsent(partition, p -> new Figures());
    }

    private Bucket bucket(long index) {
        int slot = (int) Math.floorMod(index, (long) BUCKETS);
        while (true) {
            Bucket b = ring.get(slot);
            if (b != null && b.index >= index) {
                return b; // the current bucket (or a newer one, should the clock step back)
            }
            Bucket fresh = new Bucket(index);
            if (ring.compareAndSet(slot, b, fresh)) {
                return fresh;
            }
        }
    }

    /**
     * The window's figures of every partition it holds, summed over its buckets. {@code pods} is 1 in each.
     */
    public List<TenantLoadRow> window() {
        long now = Math.floorDiv(clockMs.getAsLong(), BUCKET_MS);
        Map<String, long[]> sums = new HashMap<>();
        for (int i = 0; i < BUCKETS; i++) {
            Bucket b = ring.get(i);
            if (b == null || b.index <= now - BUCKETS || b.index > now) {
                continue;
            }
            b.byPartition.forEach((partition, f) ->
                    f.addTo(sums.computeIfAbsent(partition, p -> new long[3 + REASONS.size()])));
        }
        List<TenantLoadRow> out = new ArrayList<>(sums.size());
        sums.forEach((partition, s) -> {
            Map<String, Long> refusals = new LinkedHashMap<>();
            for (int r = 0; r < REASONS.size(); r++) {
                if (s[3 + r] > 0) {
                    refusals.put(REASONS.get(r), s[3 + r]);
                }
            }
            out.add(new TenantLoadRow(partition, s[0], s[1], s[2], refusals, 1));
        });
        return out;
    }

    /**
     * This pod's top {@code n} partitions of the window in each figure — by database time, committed bytes, fan-out
     * bytes and refusals — together (a partition among the top of several figures is listed once): at most
     * {@code 4 n} rows, loudest by database time first. A figure that is zero ranks nobody.
     */
    public List<TenantLoadRow> top(int n) {
        return top(window(), n);
    }

    /** The top {@code n} of {@code rows} in each figure, together; see {@link #top(int)}. */
    public static List<TenantLoadRow> top(List<TenantLoadRow> rows, int n) {
        Map<String, TenantLoadRow> chosen = new LinkedHashMap<>();
        for (ToLongFunction<TenantLoadRow> figure : FIGURES) {
            for (TenantLoadRow r : ranked(rows, figure, n)) {
                chosen.putIfAbsent(r.partition(), r);
            }
        }
        List<TenantLoadRow> out = new ArrayList<>(chosen.values());
        out.sort(Comparator.comparingLong(TenantLoadRow::databaseNanos)
                .reversed()
                .thenComparing(TenantLoadRow::partition));
        return out;
    }

    /** The four figures a partition is ranked by. */
    static final List<ToLongFunction<TenantLoadRow>> FIGURES = List.of(
            TenantLoadRow::databaseNanos,
            TenantLoadRow::committedBytes,
            TenantLoadRow::fanoutBytes,
            TenantLoadRow::refusalCount);

    /** The (at most) {@code n} rows whose {@code figure} is largest and above zero, largest first. */
    public static List<TenantLoadRow> ranked(List<TenantLoadRow> rows, ToLongFunction<TenantLoadRow> figure, int n) {
        List<TenantLoadRow> out = new ArrayList<>();
        for (TenantLoadRow r : rows) {
            if (figure.applyAsLong(r) > 0) {
                out.add(r);
            }
        }
        out.sort(Comparator.comparingLong(figure).reversed().thenComparing(TenantLoadRow::partition));
        return out.size() > n ? new ArrayList<>(out.subList(0, n)) : out;
    }

    /** One bucket of the window: partition → figures, bounded. */
    private static final class Bucket {
        final long index;
        final ConcurrentHashMap<String, Figures> byPartition = new ConcurrentHashMap<>();
        private final AtomicBoolean evicting = new AtomicBoolean();

        Bucket(long index) {
            this.index = index;
        }

        /**
         * Drops the {@value #EVICT} partitions whose best rank over the four figures is the worst; one thread at a
         * time (the others go on without waiting).
         */
        void evict() {
            if (!evicting.compareAndSet(false, true)) {
                return;
            }
            try {
                if (byPartition.size() < MAX_PARTITIONS) {
                    return;
                }
                List<Map.Entry<String, long[]>> entries = new ArrayList<>();
                byPartition.forEach((p, f) -> {
                    long[] s = new long[3 + REASONS.size()];
                    f.addTo(s);
                    entries.add(Map.entry(p, s));
                });
                Map<String, Integer> best = new HashMap<>();
                for (int figure = 0; figure < 4; figure++) {
                    int k = figure;
                    entries.sort(Comparator.comparingLong((Map.Entry<String, long[]> e) -> -value(e.getValue(), k)));
                    for (int rank = 0; rank < entries.size(); rank++) {
                        best.merge(entries.get(rank).getKey(), rank, Math::min);
                    }
                }
                entries.sort(Comparator.comparingInt((Map.Entry<String, long[]> e) -> -best.get(e.getKey())));
                for (int i = 0; i < EVICT && i < entries.size(); i++) {
                    byPartition.remove(entries.get(i).getKey());
                }
            } finally {
                evicting.set(false);
            }
        }

        private static long value(long[] s, int figure) {
            if (figure < 3) {
                return s[figure];
            }
            long n = 0;
            for (int r = 3; r < s.length; r++) {
                n += s[r];
            }
            return n;
        }
    }

    /** One partition's figures in one bucket; updated under its own monitor. */
    private static final class Figures {
        private long databaseNanos;
        private long committedBytes;
        private long fanoutBytes;
        private final long[] refusals = new long[REASONS.size()];

        synchronized void add(long nanos, long committed, long fanout, int refusal) {
            databaseNanos += nanos;
            committedBytes += committed;
            fanoutBytes += fanout;
            if (refusal >= 0) {
                refusals[refusal]++;
            }
        }

        /** Adds these figures to {@code sums}: database time, committed, fan-out, then the refusals by reason. */
        synchronized void addTo(long[] sums) {
            sums[0] += databaseNanos;
            sums[1] += committedBytes;
            sums[2] += fanoutBytes;
            for (int r = 0; r < refusals.length; r++) {
                sums[3 + r] += refusals[r];
            }
        }
    }
}
