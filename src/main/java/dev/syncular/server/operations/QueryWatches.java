package dev.syncular.server.operations;

import dev.syncular.server.storage.QueryReads;
import dev.syncular.server.sync.SyncRequestContext;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The pod's live query watches (REMOTE.md §6) on every {@code <mount>/operations/realtime} connection, by
 * partition. A notified commit (the realtime hub's commit channel, heard by every pod whichever took the
 * commit) reruns the watches of its partition whose query reads a table the commit touched
 * ({@link CommitTables}: one index-only read per commit, only for partitions with watches); commits to other
 * tables rerun nothing. Each watch: at most one run in flight, one dirty flag, runs no closer than
 * {@link WatchConfig#minRerunInterval()} (commits inside it coalesce into one rerun), at most
 * {@link WatchConfig#maxConcurrentRuns()} runs of the pod at once and
 * {@link WatchConfig#maxConcurrentRunsPerPartition()} of one partition, the partitions' waiting runs started in
 * turn ({@link WatchRuns}); caps on watches per connection, per partition and per pod; identical watches of one connection waiting for a slot share one run. Nothing here blocks: runs are subscribed on worker threads, timers are Vert.x timers.
 */
public final class QueryWatches {
    private final RemoteOperations operations;
    private final WatchConfig config;
    private final Vertx vertx;
    private final CommitTables commitTables;
    private final WatchRuns runs;
    private final ConcurrentHashMap<String, Set<WatchSession>> byPartition = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<RunKey, PendingRun> pending = new ConcurrentHashMap<>();
    private final AtomicInteger active = new AtomicInteger();
    /** Active watches by partition (an entry only while non-zero; guarded by its own lock). */
    private final HashMap<String, Integer> perPartition = new HashMap<>();

    public QueryWatches(RemoteOperations operations, WatchConfig config, Vertx vertx, QueryReads reads) {
        this.operations = operations;
        this.config = config;
        this.vertx = vertx;
        this.commitTables = new CommitTables(reads);
        this.runs = new WatchRuns(config.maxConcurrentRuns(), config.maxConcurrentRunsPerPartition());
    }

    /** A new connection of {@code ctx} (authenticated at the upgrade) answering through {@code outbound}. */
    public WatchSession open(SyncRequestContext ctx, WatchSession.Outbound outbound) {
        WatchSession s = new WatchSession(ctx, this, outbound);
        byPartition.compute(ctx.partition(), (k, set) -> {
            Set<WatchSession> out = set == null ? ConcurrentHashMap.newKeySet() : set;
            out.add(s);
            return out;
        });
        return s;
    }

    void closed(WatchSession s) {
        byPartition.computeIfPresent(s.ctx.partition(), (k, set) -> {
            set.remove(s);
            return set.isEmpty() ? null : set;
        });
        // the connection's runs still waiting for a slot leave the queue: they would answer nothing
        for (RunKey key : pending.keySet()) {
            if (key.session() != s) {
                continue;
            }
            Cancellable[] cancel = {null};
            pending.computeIfPresent(key, (k, p) -> {
                if (p.started) {
                    return p;
                }
                p.withdrawn = true;
                cancel[0] = p.subscription;
                return null;
            });
            if (cancel[0] != null) {
                cancel[0].cancel();
            }
        }
    }

    /** Commit {@code seq} of {@code partition} was announced (on whichever pod took it). */
    public void committed(String partition, long seq) {
        Set<WatchSession> sessions = byPartition.get(partition);
        if (sessions != null && sessions.stream().anyMatch(s -> s.size() > 0)) { // no read for sockets without watches
            commitTables.committed(partition, seq, this::touched);
        }
    }

    /** The partition's log epoch was rotated (§2.1 restore): every watch of it gets a fresh snapshot. */
    public void partitionReset(String partition) {
        touched(partition, CommitTables.ALL);
    }

    /** Commit notifications may have been lost (a re-{@code LISTEN}): every watch of the pod gets a fresh snapshot. */
    public void notificationsLost() {
        byPartition.keySet().forEach(p -> touched(p, CommitTables.ALL));
    }

    private void touched(String partition, Set<String> tables) {
        Set<WatchSession> sessions = byPartition.get(partition);
        if (sessions == null) {
            return;
        }
        for (WatchSession s : sessions) {
            for (WatchSession.Watch w : s.watching(tables)) {
                request(s, w);
            }
        }
    }

    /**
     * A run of {@code w} is wanted: now, or at the end of its rerun interval, or — when one is running or
     * waiting — folded into the dirty flag (at most one pending rerun, §6).
     */
    void request(WatchSession s, WatchSession.Watch w) {
        long waitNanos;
        synchronized (w) {
            if (w.removed) {
                return;
            }
            if (w.running || w.timerPending) {
                w.dirty = true;
                return;
            }
            waitNanos = !w.started
                    ? 0
                    : w.lastStartNanos + config.minRerunInterval().toNanos() - System.nanoTime();
            if (waitNanos > 0) {
                w.timerPending = true;
            } else {
                startLocked(w);
            }
        }
        if (waitNanos > 0) {
            vertx.setTimer(Math.max(1, TimeUnit.NANOSECONDS.toMillis(waitNanos)), t -> {
                synchronized (w) {
                    w.timerPending = false;
                    if (w.removed) {
                        return;
                    }
                    startLocked(w);
                }
                run(s, w);
            });
            return;
        }
        run(s, w);
    }

    private static void startLocked(WatchSession.Watch w) {
        w.running = true;
        w.dirty = false;
        w.started = true;
        w.lastStartNanos = System.nanoTime();
    }

    /** Watches of one connection with the same client, query and parameters: one run serves them all. */
    private record RunKey(WatchSession session, String clientId, String operationId, OperationValue params) {}

    /** A run waiting for a slot, and the watches that joined it (guarded by {@link #pending}'s bin lock). */
    private static final class PendingRun {
        final List<WatchSession.Watch> watches = new ArrayList<>();
        final List<Long> starts = new ArrayList<>();
        boolean started;
        /** Its connection closed before it started: cancelled, or to be cancelled once subscribed. */
        boolean withdrawn;
        /** Its place in the pod's run queue ({@code null} until subscribed). */
        Cancellable subscription;
    }

    /**
     * Runs {@code w}: identical watches of one connection (same client, query and parameters: the same answer
     * through the same authorization) whose runs are still waiting for a slot share one execution. A watch
     * joins only a run that has not started, so that run's snapshot is taken after every commit the joining
     * watch was rerun for (§6: each snapshot reflects the commits that caused it); once a run starts, a later
     * request waits for a run of its own.
     */
    private void run(WatchSession s, WatchSession.Watch w) {
        long start = System.nanoTime();
        RunKey key = new RunKey(s, w.clientId, w.operationId, w.params);
        PendingRun[] created = new PendingRun[1];
        pending.compute(key, (k, p) -> {
            PendingRun run = p != null && !p.started ? p : new PendingRun();
            run.watches.add(w);
            run.starts.add(start);
            if (run != p) {
                created[0] = run;
            }
            return run;
        });
        PendingRun run = created[0];
        if (run == null) {
            return; // joined a run still waiting for its slot
        }
        Cancellable subscription = runs.submit(s.ctx.partition(), () -> {
                    pending.compute(key, (k, p) -> {
                        run.started = true; // from here on nobody joins: the member list is final
                        return p == run ? null : p;
                    });
                    boolean live = false;
                    for (WatchSession.Watch m : run.watches) {
                        synchronized (m) {
                            live |= !m.removed;
                        }
                    }
                    if (!live) {
                        return Uni.createFrom().nullItem(); // unwatched while waiting for a slot
                    }
                    return operations.query(s.ctx, w.clientId, w.operationId, w.params);
                })
                .subscribe()
                .with(result -> finishAll(s, run, result, null), e -> finishAll(s, run, null, e));
        boolean[] withdrawn = {false};
        pending.compute(key, (k, p) -> {
            run.subscription = subscription;
            withdrawn[0] = run.withdrawn;
            return p;
        });
        if (withdrawn[0]) {
            subscription.cancel(); // the connection closed while the run was being queued
        }
    }

    /** Every watch of a shared run answered with its one result or failure. */
    private void finishAll(WatchSession s, PendingRun run, OperationValue result, Throwable failure) {
        for (int i = 0; i < run.watches.size(); i++) {
            finished(s, run.watches.get(i), result, failure, run.starts.get(i));
        }
    }

    private void finished(WatchSession s, WatchSession.Watch w, OperationValue result, Throwable failure, long start) {
        boolean again;
        if (result == null && failure == null) {
            synchronized (w) {
                w.running = false;
            }
            return;
        }
        OperationValue answer = failure == null
                ? WatchMessage.snapshot(w.watchId, (OperationValue.Obj) result)
                : WatchMessage.error(w.watchId, failure);
        WatchSession.Answered answered = s.answer(
                w,
                answer,
                failure != null,
                () -> operations.watchAnswered(w.operationId, answer, System.nanoTime() - start));
        boolean registered = answered == WatchSession.Answered.SENT;
        synchronized (w) {
            w.running = false;
            again = registered && w.dirty && !w.removed;
            w.dirty = false;
        }
        if (again) {
            request(s, w);
        }
    }

    /**
     * One more watch for the pod and {@code partition}, unless the pod holds {@link WatchConfig#maxPerPod()} or the
     * partition {@link WatchConfig#maxPerPartition()} of them on this pod (issue 45: one tenant cannot take the pod's
     * watches from the others).
     */
    boolean reserve(String partition) {
        synchronized (perPartition) {
            int mine = perPartition.getOrDefault(partition, 0);
            if (active.get() >= config.maxPerPod() || mine >= config.maxPerPartition()) {
                return false;
            }
            active.incrementAndGet();
            perPartition.put(partition, mine + 1);
            return true;
        }
    }

    void release(String partition) {
        synchronized (perPartition) {
            active.decrementAndGet();
            perPartition.computeIfPresent(partition, (k, n) -> n <= 1 ? null : n - 1);
        }
    }

    /** Active watches of the pod. */
    public int activeWatches() {
        return active.get();
    }

    /** Watch runs waiting for one of the pod's run slots. */
    public int runBacklog() {
        return runs.backlog();
    }

    WatchConfig config() {
        return config;
    }

    RemoteOperations operations() {
        return operations;
    }
}
