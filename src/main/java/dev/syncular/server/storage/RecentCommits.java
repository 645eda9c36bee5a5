package dev.syncular.server.storage;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;

/**
 * The newest commits of each partition as this process committed them, whole, so the §4.5 log window of a pull
 * that follows them, and the §8.2 fan-out's read of one of them, are answered without reading the log again: per
 * partition a run of consecutive sequences (§2.1: commit seqs are dense), in the partition's {@code logEpoch}, told
 * by the push path ({@link #prepare} before its {@code COMMIT}, {@link Pending#committed()} once it answered), each
 * change decoded from the very payload bytes it wrote (the same values a read returns).
 *
 * <p>{@link #window} answers only when the run holds every sequence of the window in the round's epoch;
 * otherwise (a commit of another pod, a gap, a rotated epoch, an evicted partition) the caller reads the log.
 * Commits never change once committed, and the horizon (§4.6) is checked by the pull before and after its window,
 * so an answer is exactly what the log read would return. A sequence offered below the run's end (a restored
 * database whose epoch has not been rotated yet) or past a gap starts the run anew.
 *
 * <p>Bounded in bytes ({@code budgetBytes}, an estimate of each change's row, id and scopes) and per partition
 * ({@link #MAX_COMMITS_PER_PARTITION}); past the budget the partition touched least recently loses its run.
 * {@link #OFF} holds nothing. Thread-safe: every method takes the instance's lock for a short, bounded step.
 */
public final class RecentCommits {
    /**
     * The newest commits a run keeps: a client that syncs follows its partition closely, so a window rarely reaches
     * further back, and each commit held is live data every young collection copies until it is promoted.
     */
    public static final int MAX_COMMITS_PER_PARTITION = 256;

    /** Holds nothing: every window is read from the log. */
    public static final RecentCommits OFF = new RecentCommits(0);

    private final long budgetBytes;
    /** Runs by partition, least recently touched first. */
    private final LinkedHashMap<String, Run> runs = new LinkedHashMap<>(16, 0.75f, true);

    private long bytes;
    private final LongAdder hits = new LongAdder();
    private final LongAdder misses = new LongAdder();
    /** Groups written and not yet committed, by partition (§6.4: a pod runs one group of a partition at a time). */
    private final HashMap<String, Pending> pending = new HashMap<>();

    private final LongAdder commitHits = new LongAdder();
    private final LongAdder commitMisses = new LongAdder();

    /** @param budgetBytes the estimated bytes all runs may hold; {@code 0} turns the cache off */
    public RecentCommits(long budgetBytes) {
        if (budgetBytes < 0) {
            throw new IllegalArgumentException("budgetBytes must be >= 0");
        }
        this.budgetBytes = budgetBytes;
    }

    /** Whether anything is ever held. */
    public boolean enabled() {
        return budgetBytes > 0;
    }

    /**
     * A run of consecutive commits of one partition in one epoch, in a ring: the commit of sequence {@code s} is at
     * index {@code s - first()}, so a window is found without walking the run.
     */
    private static final class Run {
        final String logEpoch;
        private Held[] ring = new Held[8];
        private int start;
        private int size;
        long bytes;

        Run(String logEpoch) {
            this.logEpoch = logEpoch;
        }

        boolean isEmpty() {
            return size == 0;
        }

        int size() {
            return size;
        }

        /** The {@code i}-th commit, oldest first. */
        Held get(int i) {
            return ring[(start + i) & (ring.length - 1)];
        }

        long first() {
            return get(0).commit.commitSeq();
        }

        long last() {
            return get(size - 1).commit.commitSeq();
        }

        void add(Held h) {
            if (size == ring.length) {
                Held[] grown = new Held[ring.length * 2];
                for (int i = 0; i < size; i++) {
                    grown[i] = get(i);
                }
                ring = grown;
                start = 0;
            }
            ring[(start + size) & (ring.length - 1)] = h;
            size++;
            bytes += h.bytes;
        }

        /** Drops the oldest commit; yields its bytes. */
        long dropOldest() {
            Held h = ring[start];
            ring[start] = null;
            start = (start + 1) & (ring.length - 1);
            size--;
            bytes -= h.bytes;
            return h.bytes;
        }
    }

    private record Held(StoredCommit commit, long bytes) {}

    /**
     * Tells a commit that has committed, every change of it ({@code commit} as {@link SyncStorage#readCommit}
     * returns it), in {@code logEpoch}. Commits of one partition are offered in sequence order.
     */
    public synchronized void offer(String partition, String logEpoch, StoredCommit commit) {
        if (budgetBytes == 0) {
            return;
        }
        Run run = runs.get(partition);
        if (run == null || !run.logEpoch.equals(logEpoch) || run.isEmpty() || commit.commitSeq() != run.last() + 1) {
            if (run != null) {
                bytes -= run.bytes;
            }
            run = new Run(logEpoch);
            runs.put(partition, run);
        }
        long size = estimate(commit);
        run.add(new Held(commit, size));
        bytes += size;
        while (run.size() > MAX_COMMITS_PER_PARTITION) {
            bytes -= run.dropOldest();
        }
        // past the budget: whole runs of the partitions touched least recently, then this run's oldest commits
        Iterator<Map.Entry<String, Run>> eldest = runs.entrySet().iterator();
        while (bytes > budgetBytes && eldest.hasNext()) {
            Map.Entry<String, Run> e = eldest.next();
            if (e.getValue() == run) {
                continue;
            }
            bytes -= e.getValue().bytes;
            eldest.remove();
        }
        while (bytes > budgetBytes && !run.isEmpty()) {
            bytes -= run.dropOldest();
        }
        if (run.isEmpty()) {
            runs.remove(partition);
        }
    }

    /**
     * §4.5: the commit window of {@code query} as {@link SyncStorage#readCommits} returns it — commits of
     * {@code (afterSeq, upToSeq]} with changes to the query's table that match its effective scopes, oldest first,
     * cut before the commit that would pass {@code changeLimit} (never splitting one; at least one commit) — when
     * the run of {@code partition} in {@code logEpoch} holds every sequence of the window; empty otherwise.
     */
    public Optional<CommitWindow> window(String partition, String logEpoch, CommitQuery query) {
        if (budgetBytes == 0) {
            return Optional.empty();
        }
        if (query.afterSeq() >= query.upToSeq()) {
            return Optional.of(new CommitWindow(List.of(), Math.max(query.upToSeq(), query.afterSeq()), false));
        }
        List<StoredCommit> span;
        synchronized (this) {
            Run run = runs.get(partition);
            if (run == null
                    || !run.logEpoch.equals(logEpoch)
                    || run.first() > query.afterSeq() + 1
                    || run.last() < query.upToSeq()) {
                misses.increment();
                return Optional.empty();
            }
            int from = (int) (query.afterSeq() + 1 - run.first());
            int to = (int) (query.upToSeq() - run.first());
            span = new ArrayList<>(to - from + 1);
            for (int i = from; i <= to; i++) {
                span.add(run.get(i).commit);
            }
        }
        hits.increment();
        // the filter and the cut, outside the lock
        List<StoredCommit> out = new ArrayList<>();
        int total = 0;
        for (StoredCommit c : span) {
            List<StoredChange> matching = new ArrayList<>(c.changes().size());
            for (StoredChange ch : c.changes()) {
                if (ch.table().equals(query.table()) && query.matches(ch.scopes())) {
                    matching.add(ch);
                }
            }
            if (matching.isEmpty()) {
                continue;
            }
            if (total > 0 && total + matching.size() > query.changeLimit()) {
                return Optional.of(new CommitWindow(out, out.get(out.size() - 1).commitSeq(), true));
            }
            out.add(
                    matching.size() == c.changes().size()
                            ? c
                            : new StoredCommit(
                                    c.commitSeq(),
                                    c.createdAtMs(),
                                    c.actorId(),
                                    c.clientId(),
                                    c.clientCommitId(),
                                    matching,
                                    c.traceParent()));
            total += matching.size();
        }
        return Optional.of(new CommitWindow(out, query.upToSeq(), false));
    }

    /**
     * §8.2: commit {@code seq} of {@code partition} whole (as {@link SyncStorage#readCommit} returns it) when the
     * run of {@code logEpoch} holds it — or, when it belongs to a group of this process written and not yet
     * committed ({@link #prepare}), once that group's {@code COMMIT} has answered: a notification of the commit proves
     * it committed, and it may arrive before the answer. The stage completes with {@code null} when the group
     * failed (the sequence is another writer's then); empty when not held, and the caller reads the log.
     */
    public Optional<CompletableFuture<StoredCommit>> commit(String partition, String logEpoch, long seq) {
        if (budgetBytes == 0) {
            return Optional.empty();
        }
        Pending group;
        StoredCommit inGroup = null;
        synchronized (this) {
            Run run = runs.get(partition);
            if (run != null && run.logEpoch.equals(logEpoch) && seq >= run.first() && seq <= run.last()) {
                commitHits.increment();
                return Optional.of(CompletableFuture.completedFuture(run.get((int) (seq - run.first())).commit));
            }
            group = pending.get(partition);
            if (group != null && group.logEpoch.equals(logEpoch)) {
                for (StoredCommit c : group.commits) {
                    if (c.commitSeq() == seq) {
                        inGroup = c;
                    }
                }
            }
            if (inGroup == null) {
                commitMisses.increment();
                return Optional.empty();
            }
        }
        StoredCommit found = inGroup;
        return Optional.of(group.outcome.thenApply(committed -> {
            (committed ? commitHits : commitMisses).increment();
            return committed ? found : null;
        }));
    }

    /**
     * The commits of a group written in {@code logEpoch} whose {@code COMMIT} is about to be sent: told {@link
     * Pending#committed()} when it answered, else {@link Pending#abandoned()}. Never answers a window before that.
     */
    public Pending prepare(String partition, String logEpoch, List<StoredCommit> commits) {
        if (budgetBytes == 0 || commits.isEmpty()) {
            return Pending.NONE;
        }
        Pending p = new Pending(this, partition, logEpoch, List.copyOf(commits));
        Pending before;
        synchronized (this) {
            before = pending.put(partition, p);
        }
        if (before != null) {
            before.outcome.complete(false); // a group that never told its outcome: its commits are not trusted
        }
        return p;
    }

    /** A group written and not yet committed ({@link #prepare}). */
    public static final class Pending {
        /** Nothing held: the outcome is ignored. */
        public static final Pending NONE = new Pending(null, "", "", List.of());

        private final RecentCommits owner;
        private final String partition;
        private final String logEpoch;
        private final List<StoredCommit> commits;
        private final CompletableFuture<Boolean> outcome = new CompletableFuture<>();

        private Pending(RecentCommits owner, String partition, String logEpoch, List<StoredCommit> commits) {
            this.owner = owner;
            this.partition = partition;
            this.logEpoch = logEpoch;
            this.commits = commits;
        }

        /** The {@code COMMIT} answered: the commits are held (in sequence order). */
        public void committed() {
            if (owner == null) {
                return;
            }
            synchronized (owner) {
                owner.pending.remove(partition, this);
                for (StoredCommit c : commits) {
                    owner.offer(partition, logEpoch, c);
                }
            }
            outcome.complete(true);
        }

        /** The group failed or its outcome is unknown: nothing of it is held. */
        public void abandoned() {
            if (owner == null) {
                return;
            }
            synchronized (owner) {
                owner.pending.remove(partition, this);
            }
            outcome.complete(false);
        }
    }

    /** Single commits ({@link #commit}) answered from memory since start. */
    public long commitHits() {
        return commitHits.sum();
    }

    /** Single commits the caller had to read from the log. */
    public long commitMisses() {
        return commitMisses.sum();
    }

    /** Windows answered from memory since start. */
    public long hits() {
        return hits.sum();
    }

    /** Windows the caller had to read from the log (not held, or not wholly). */
    public long misses() {
        return misses.sum();
    }

    /** The estimated bytes held now. */
    public synchronized long bytes() {
        return bytes;
    }

    /** Object headers and references by rule of thumb, strings at two bytes a character. */
    static long estimate(StoredCommit c) {
        long n = 96
                + 2L
                        * (c.actorId().length()
                                + c.clientId().length()
                                + c.clientCommitId().length());
        for (StoredChange ch : c.changes()) {
            n += 96 + 2L * (ch.table().length() + ch.rowId().length());
            for (Map.Entry<String, String> s : ch.scopes().entrySet()) {
                n += 64 + 2L * (s.getKey().length() + s.getValue().length());
            }
            if (ch.row() != null) {
                n += 16 + 8L * ch.row().length;
                for (Object v : ch.row()) {
                    if (v instanceof String s) {
                        n += 40 + 2L * s.length();
                    } else if (v instanceof byte[] b) {
                        n += 16 + b.length;
                    } else if (v != null) {
                        n += 16;
                    }
                }
            }
        }
        return n;
    }
}
