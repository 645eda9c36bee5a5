package dev.syncular.server.storage.postgres;

import static dev.syncular.server.storage.postgres.PgSql.first;

import dev.syncular.server.storage.PartitionState;
import dev.syncular.server.storage.PushReadHint;
import dev.syncular.server.storage.PushTx;
import dev.syncular.server.storage.RecentCommits;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.StoredCommit;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;

/**
 * Partition transactions (§6.4: pushes serialized per partition, each commit one transaction; §2.4: the serve
 * gate re-evaluated under the partition lock): an in-process queue per partition that drains in groups, one
 * database transaction per group holding the partition row lock, each queued work in its own savepoint
 * when there are several, with the group's {@link PushReadAhead} in the first round trip, and the works' writes
 * pipelined back to back with the {@code COMMIT} right behind them. Each work sees a {@link PushTransaction}.
 * While groups follow each other, the partition keeps its connection, and the next group starts before the
 * previous one's outcomes are delivered, each on the Vert.x context its work was queued on.
 *
 * <p>Bounded: at most {@code maxQueued} works wait in one partition's queue; one more is refused at once with
 * {@link StorageException#BUSY} ({@code queue_full}). Each group transaction begins READ COMMITTED and sets
 * {@code lock_timeout} and {@code statement_timeout} ({@code SET LOCAL}, in the message of its {@code BEGIN}); a
 * timeout, deadlock or pool refusal rolls the group back and reaches every work as {@code BUSY}.
 */
final class PushQueue {
    private final Pool pool;
    private final PartitionRegistry registry;
    /** What every {@link PushTransaction} of this storage shares. */
    private final PushContext tx;

    private final int maxQueued;
    /** The group transaction's start: {@code BEGIN} with its isolation level, lock and statement timeouts. */
    private final String begin;

    PushQueue(
            Pool pool,
            PartitionRegistry registry,
            PushContext tx,
            int maxQueued,
            long lockTimeoutMs,
            long statementTimeoutMs) {
        this.pool = pool;
        this.registry = registry;
        this.tx = tx;
        this.maxQueued = maxQueued;
        this.begin = "BEGIN ISOLATION LEVEL READ COMMITTED; SET LOCAL lock_timeout = " + lockTimeoutMs
                + "; SET LOCAL statement_timeout = " + statementTimeoutMs;
    }

    /**
     * Most partition transactions run in one database transaction (group commit). Kept well below 64, the
     * per-backend subtransaction cache of PostgreSQL (each batched transaction runs in a savepoint).
     */
    static final int MAX_GROUP = 16;

    /** Groups that run one after the other on the connection a partition keeps, before it goes back to the pool. */
    static final int MAX_GROUPS_HELD = 16;

    /** A queued partition transaction: its work and where its outcome goes (after the commit). */
    static final class Job {
        final Function<PushTx, Uni<Object>> work;
        /** The work's announced first reads, or null. */
        final PushReadHint hint;

        final CompletableFuture<Object> result = new CompletableFuture<>();
        /**
         * The Vert.x context the work was queued on (its request's duplicated context, with the request id of its
         * log lines), or {@code null} off Vert.x: the outcome is completed there, not on the context of the request
         * whose connection ran the group (issue 44, hole 4).
         */
        final Context caller;

        Object item;
        Throwable failure;

        Job(Function<PushTx, Uni<Object>> work, PushReadHint hint) {
            this.work = work;
            this.hint = hint;
            this.caller = Vertx.currentContext();
        }

        /** Completes {@link #result} on the caller's context: at once when it is the current one, else hopping there. */
        void complete(Object value, Throwable failed) {
            if (caller == null || caller == Vertx.currentContext()) {
                settle(value, failed);
            } else {
                caller.runOnContext(v -> settle(value, failed));
            }
        }

        private void settle(Object value, Throwable failed) {
            if (failed != null) {
                result.completeExceptionally(failed);
            } else {
                result.complete(value);
            }
        }
    }

    /** The in-process queue of one partition; {@code running} while a drainer owns it. */
    private static final class PartitionQueue {
        final ArrayDeque<Job> jobs = new ArrayDeque<>();
        boolean running;
        boolean dead;
    }

    private final ConcurrentHashMap<String, PartitionQueue> partitionQueues = new ConcurrentHashMap<>();
    /** Groups run again with each work's writes awaited after a pipelined attempt failed (tests). */
    private final LongAdder pipelinedReruns = new LongAdder();

    /** How many groups ran again after their pipelined attempt failed (tests). */
    long pipelinedReruns() {
        return pipelinedReruns.sum();
    }

    /** How many {@link PushTx#findPushResult} / {@link PushTx#readRows} calls a read-ahead answered so far (tests). */
    long readAheadAnswers() {
        return tx.readAheadAnswers.sum();
    }

    /**
     * Partition transactions queue in-process (waiting ones hold no pool connection) and the queue drains in
     * groups: one database transaction takes the partition row lock (serializing with other server
     * instances; {@code BEGIN}, the lock and the serve gate read go out pipelined), runs the queued works one
     * after the other — each in its own savepoint when there are several, so a failing work rolls back alone
     * — and commits once (one lock hand-off and one WAL flush for the group). Every work's outcome is
     * delivered only after that commit. Writes of {@link PushTransaction} are pipelined, and so is the
     * {@code COMMIT} behind the last of them: the works follow each other without a round trip between them (see
     * {@link #runGroup(String, List, SqlConnection, boolean, boolean[])}).
     *
     * <p>{@code hint} (may be null): the group's first round trip also reads ahead what the hinted works will
     * read first (see {@link PushReadAhead}).
     */
    @SuppressWarnings("unchecked")
    <T> Uni<T> inPartitionTransaction(String partition, PushReadHint hint, Function<PushTx, Uni<T>> work) {
        return Uni.createFrom().deferred(() -> {
            Job job = new Job((Function<PushTx, Uni<Object>>) (Function<?, ?>) work, hint);
            while (true) {
                PartitionQueue q = partitionQueues.computeIfAbsent(partition, k -> new PartitionQueue());
                boolean start;
                synchronized (q) {
                    if (q.dead) {
                        continue;
                    }
                    if (q.jobs.size() >= maxQueued) {
                        return Uni.createFrom().failure(PgSql.busy("queue_full", null));
                    }
                    q.jobs.add(job);
                    start = !q.running;
                    q.running = true;
                }
                if (start) {
                    drain(partition, q, Optional.empty(), 0);
                }
                break;
            }
            return Uni.createFrom().completionStage(job.result).map(o -> (T) o);
        });
    }

    /**
     * Runs the next group of {@code q}, on {@code held} (the connection the previous group committed on) or a pooled
     * connection; once it ends, the group after it is started first — on the same connection — and only then are
     * the outcomes delivered, so the callers' continuations (their pulls and responses) run while PostgreSQL already
     * works on the next group. The connection goes back to the pool when the queue is empty, a group failed, or
     * {@link #MAX_GROUPS_HELD} groups ran on it in a row ({@code heldGroups} so far): then the partition waits in the
     * pool's queue like every other reader, so a partition that always has pushes queued cannot keep a connection
     * from the rounds of other partitions for long.
     */
    private void drain(String partition, PartitionQueue q, Optional<SqlConnection> held, int heldGroups) {
        List<Job> group = new ArrayList<>();
        synchronized (q) {
            while (group.size() < MAX_GROUP && !q.jobs.isEmpty()) {
                group.add(q.jobs.poll());
            }
            if (group.isEmpty()) {
                q.running = false;
                q.dead = true;
                partitionQueues.remove(partition, q);
            }
        }
        if (group.isEmpty()) {
            held.ifPresent(PushQueue::release);
            return;
        }
        List<SqlConnection> used = new ArrayList<>(1);
        held.map(c -> Uni.createFrom().item(c))
                .orElseGet(pool::getConnection)
                .invoke(used::add)
                .chain(conn -> runGroup(partition, group, conn))
                .subscribe()
                .with(
                        v -> {
                            if (heldGroups + 1 < MAX_GROUPS_HELD) {
                                drain(partition, q, Optional.of(used.get(0)), heldGroups + 1);
                            } else {
                                release(used.get(0));
                                drain(partition, q, Optional.empty(), 0);
                            }
                            deliver(group, null);
                        },
                        e -> {
                            used.forEach(PushQueue::release);
                            drain(partition, q, Optional.empty(), 0);
                            deliver(group, e);
                        });
    }

    /** Each job's outcome, on its own caller's context ({@link Job#complete}). */
    private static void deliver(List<Job> group, Throwable groupFailure) {
        for (Job j : group) {
            if (groupFailure != null) {
                j.complete(null, PgSql.busyOr(groupFailure));
            } else if (j.failure != null) {
                j.complete(null, PgSql.busyOr(j.failure));
            } else {
                j.complete(j.item, null);
            }
        }
    }

    /** Back to the pool; a connection that cannot be is discarded by it. */
    private static void release(SqlConnection conn) {
        conn.close().subscribe().with(v -> {}, e -> {});
    }

    /**
     * One database transaction for {@code group}; fails (everything rolled back) when the lock, a lone
     * work, a read-ahead statement or the commit fails, else each job holds its own outcome.
     */
    private Uni<Void> runGroup(String partition, List<Job> group, SqlConnection conn) {
        if (group.size() == 1) {
            return runGroup(partition, group, conn, false, new boolean[1]);
        }
        boolean[] rerunnable = {false};
        return runGroup(partition, group, conn, true, rerunnable)
                .onFailure(e -> rerunnable[0] && PgSql.busy(e) == null)
                .recoverWithUni(e -> {
                    // a write of some work failed somewhere in the pipeline (a duplicate idempotency record, a
                    // statement PostgreSQL refused), which aborted the transaction: nothing of the group committed;
                    // again with each work's writes awaited in its savepoint, so the failure stays with its work
                    pipelinedReruns.increment();
                    for (Job j : group) {
                        j.item = null;
                        j.failure = null;
                    }
                    return runGroup(partition, group, conn, false, new boolean[1]);
                });
    }

    /**
     * One attempt at {@code group}'s transaction. {@code pipelined}: each work's writes are sent and not awaited
     * (the next work's savepoint and statements follow them in the same pipeline) and the group awaits them all
     * with the {@code COMMIT} sent right behind them: the works of a group and the commit take one round trip. A
     * write PostgreSQL refuses (a duplicate idempotency record included) aborts the transaction, so that
     * {@code COMMIT} rolls back, and {@link #runGroup(String, List, SqlConnection)} runs the group again awaiting
     * each work's writes in its savepoint, so the failure stays with its work (the transaction is the connection's,
     * not the SQL client's, which would turn the {@code COMMIT} into a rollback after any failed statement, even one
     * rolled back to its savepoint). {@code rerunnable} is set once the lock is held and the works start, and
     * cleared once every write succeeded (from then on the attempt may have committed: it is never run again).
     */
    private Uni<Void> runGroup(
            String partition, List<Job> group, SqlConnection conn, boolean pipelined, boolean[] rerunnable) {
        return Uni.createFrom().deferred(() -> {
            // BEGIN, READ COMMITTED (each statement sees what committed before it, the gate read after the lock
            // included) and the timeouts, before the lock: one simple-query message in the same round trip. The
            // transaction is the connection's, not the SQL client's: its COMMIT is pipelined behind the works' writes
            // (the client's own transaction would wait for their answers first).
            CompletableFuture<RowSet<Row>> set = conn.query(begin).execute().subscribeAsCompletionStage();
            CompletableFuture<RowSet<Row>> lock = conn.preparedQuery(registry.lockSql)
                    .execute(Tuple.of(partition))
                    .subscribeAsCompletionStage();
            // A statement of its own, not folded into the lock: one statement's gate columns would come from a
            // snapshot taken before the lock wait, missing what the previous lock holder committed (§2.4: the
            // gate is re-evaluated under the lock). Pipelined, the two cost one round trip.
            CompletableFuture<RowSet<Row>> gate = conn.preparedQuery(tx.gates.serveGateAllVersions)
                    .execute(Tuple.of(partition))
                    .subscribeAsCompletionStage();
            // The hinted works' first reads, pipelined behind the gate read: they run after the lock is granted
            // (each statement its own snapshot), in the same round trip.
            PushReadAhead pre = new PushReadAhead(tx.results, tx.installed, conn, partition, group);
            GroupState[] ran = {null};
            RecentCommits.Pending[] pending = {RecentCommits.Pending.NONE};
            CompletableFuture<?>[] commit = {null};
            return Uni.createFrom()
                    .completionStage(set)
                    .chain(() -> Uni.createFrom().completionStage(lock))
                    .chain(rs -> Uni.createFrom()
                            .completionStage(gate)
                            .chain(g -> pre.await().chain(() -> {
                                Row r = first(rs);
                                if (r == null) {
                                    throw PartitionRegistry.unknownPartition();
                                }
                                GroupState gs = new GroupState(
                                        conn,
                                        registry.withOverlay(PartitionRegistry.partitionState(r)),
                                        first(g),
                                        pre,
                                        pipelined);
                                ran[0] = gs;
                                rerunnable[0] = true;
                                if (group.size() == 1) {
                                    Job only = group.get(0);
                                    PushTransaction ptx = gs.next(null);
                                    return Uni.createFrom()
                                            .deferred(() -> only.work.apply(ptx))
                                            .invoke(item -> {
                                                only.item = item;
                                                gs.maxCommitSeq = ptx.maxCommitSeq;
                                                gs.appended.addAll(ptx.appended);
                                                gs.unawaited.addAll(ptx.handOver());
                                            })
                                            .replaceWithVoid();
                                }
                                return Multi.createFrom()
                                        .iterable(group)
                                        .onItem()
                                        .transformToUniAndConcatenate(job -> runInSavepoint(gs, job))
                                        .collect()
                                        .last();
                            })))
                    .chain(() -> {
                        // the group's commits, in sequence order, for the pulls and the fan-out that follow:
                        // pending until the COMMIT answers (its NOTIFY may reach the fan-out first)
                        GroupState gs = ran[0];
                        pending[0] = tx.recent.prepare(partition, gs.locked.logEpoch(), gs.appended);
                        // COMMIT right behind the writes not answered yet, in the same round trip. A write PostgreSQL
                        // refuses (a duplicate idempotency record included) aborts the transaction, so this COMMIT
                        // then ends it as a rollback: nothing of the attempt is kept, and it may run again.
                        if (gs.maxCommitSeq != gs.locked.maxCommitSeq()) {
                            // the group's commits (dense: a rolled-back work's sequence went to the next work)
                            // move max_commit_seq and are announced once, before the COMMIT
                            gs.unawaited.add(conn.preparedQuery(tx.announceGroup)
                                    .execute(Tuple.of(
                                            partition,
                                            gs.maxCommitSeq,
                                            CommitAppend.announcement(
                                                    partition, gs.locked.maxCommitSeq() + 1, gs.maxCommitSeq)))
                                    .subscribeAsCompletionStage());
                        }
                        commit[0] = conn.query("COMMIT").execute().subscribeAsCompletionStage();
                        return PgSql.allSettled(gs.unawaited);
                    })
                    .invoke(() -> {
                        // every write succeeded: the COMMIT commits (or fails as a whole), never run again
                        rerunnable[0] = false;
                    })
                    .chain(() -> Uni.createFrom().completionStage(commit[0]).replaceWithVoid())
                    .invoke(() -> pending[0].committed())
                    .onFailure()
                    .invoke(e -> pending[0].abandoned())
                    .onCancellation()
                    .invoke(() -> pending[0].abandoned())
                    .onFailure()
                    .call(e -> commit[0] != null
                            // the COMMIT ends the transaction either way
                            ? Uni.createFrom().completionStage(commit[0].handle((x, y) -> null))
                            : conn.query("ROLLBACK").execute().onFailure().recoverWithNull())
                    .onFailure()
                    .call(e -> Uni.createFrom()
                            .completionStage(set.handle((x, y) -> null)
                                    .thenCombine(lock.handle((x, y) -> null), (x, y) -> null)
                                    .thenCombine(gate.handle((x, y) -> null), (x, y) -> null)
                                    .thenCombine(pre.settled(), (x, y) -> null))
                            .replaceWithVoid());
        });
    }

    /**
     * The running state of a group transaction: the commit sequence carries from work to work, and so do the
     * serve gate row read under the lock, the read-ahead and the record of what the works wrote.
     */
    private final class GroupState {
        final SqlConnection conn;
        final PartitionState locked;
        long maxCommitSeq;
        /** The serve gate row read right after the lock (all schema versions). */
        final Row gate;

        final PushReadAhead pre;
        final PushReadAhead.GroupWrites writes = new PushReadAhead.GroupWrites();
        /** The commits of the works that succeeded, in sequence order ({@link PushTransaction#appended}). */
        final List<StoredCommit> appended = new ArrayList<>();
        /**
         * Whether each work's writes are left unawaited until the commit (see
         * {@link #runGroup(String, List, SqlConnection, boolean, boolean[])}).
         */
        final boolean pipelined;
        /** The works' writes sent and not awaited yet, in order; awaited behind the {@code COMMIT} sent after them. */
        final List<CompletableFuture<?>> unawaited = new ArrayList<>();

        int index;

        GroupState(SqlConnection conn, PartitionState locked, Row gate, PushReadAhead pre, boolean pipelined) {
            this.conn = conn;
            this.locked = locked;
            this.maxCommitSeq = locked.maxCommitSeq();
            this.gate = gate;
            this.pre = pre;
            this.pipelined = pipelined;
        }

        /** A work that succeeded: its writes awaited now, or (pipelined) by the commit. */
        Uni<Void> settle(PushTransaction ptx) {
            if (!pipelined) {
                return ptx.flush();
            }
            unawaited.addAll(ptx.handOver());
            return Uni.createFrom().voidItem();
        }

        PushTransaction next(String savepoint) {
            PushTransaction ptx = new PushTransaction(
                    tx,
                    conn,
                    new PartitionState(
                            locked.partition(),
                            locked.logEpoch(),
                            maxCommitSeq,
                            locked.horizonSeq(),
                            locked.createdAtMs(),
                            locked.lastSeenAtMs()),
                    writes,
                    pre.byJob[index]);
            index++;
            if (savepoint != null) {
                ptx.pending.add(conn.query("SAVEPOINT " + savepoint).execute().subscribeAsCompletionStage());
            }
            if (!writes.gateMoved) {
                // §2.4: each work's gate is evaluated under the lock. The row read right after the lock is what
                // a fresh read would return: its inputs (marker, log epoch, horizon, checkpoints) are written
                // by no work of the group but a checkpoint advance (then gateMoved), and otherwise only by
                // lock holders or by transactions that could as well have committed right after this read.
                ptx.gate = gate;
            } else {
                // a fresh gate read, pipelined behind the previous work's statements
                ptx.gateRead = conn.preparedQuery(tx.gates.serveGateAllVersions)
                        .execute(Tuple.of(locked.partition()))
                        .subscribeAsCompletionStage();
            }
            return ptx;
        }
    }

    private Uni<Void> runInSavepoint(GroupState gs, Job job) {
        String name = "syncular_group_" + (gs.index + 1);
        PushTransaction ptx = gs.next(name);
        return Uni.createFrom()
                .deferred(() -> job.work.apply(ptx))
                .call(() -> gs.settle(ptx))
                .onItem()
                .invoke(item -> {
                    job.item = item;
                    gs.maxCommitSeq = ptx.maxCommitSeq;
                    gs.appended.addAll(ptx.appended);
                    // Not released: the next work's savepoint nests inside this one (at most MAX_GROUP deep), which
                    // rolls that work back alone just the same, and the COMMIT ends them all — one statement less
                    // per work.
                })
                .replaceWithVoid()
                .onFailure()
                .recoverWithUni(e -> {
                    job.failure = e;
                    ptx.dropHeld();
                    return ptx.flush()
                            .onFailure()
                            .recoverWithNull()
                            .chain(() -> gs.conn
                                    .query("ROLLBACK TO SAVEPOINT " + name)
                                    .execute())
                            .chain(() ->
                                    gs.conn.query("RELEASE SAVEPOINT " + name).execute())
                            .replaceWithVoid();
                });
    }
}
