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
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Transaction;
import io.vertx.mutiny.sqlclient.Tuple;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;

/**
 * Partition transactions (§6.4: pushes serialized per partition, each commit one transaction; §2.4: the serve
 * gate re-evaluated under the partition lock): an in-process queue per partition that drains in groups, one
 * database transaction per group holding the partition row lock, each queued work in its own savepoint
 * when there are several, with the group's {@link PushReadAhead} in the first round trip, and the works' writes
 * pipelined back to back, awaited once before the {@code COMMIT}. Each work sees a {@link PushTransaction}.
 *
 * <p>Bounded: at most {@code maxQueued} works wait in one partition's queue; one more is refused at once with
 * {@link StorageException#BUSY} ({@code queue_full}). Each group transaction states READ COMMITTED and sets
 * {@code lock_timeout} and {@code statement_timeout} ({@code SET LOCAL}, pipelined with {@code BEGIN}); a
 * timeout, deadlock or pool refusal rolls the group back and reaches every work as {@code BUSY}.
 */
final class PushQueue {
    private final Pool pool;
    private final PartitionRegistry registry;
    /** What every {@link PushTransaction} of this storage shares. */
    private final PushTransaction.Context tx;

    private final int maxQueued;
    /** The group transaction's settings: isolation level, lock and statement timeouts. */
    private final String settings;

    PushQueue(
            Pool pool,
            PartitionRegistry registry,
            PushTransaction.Context tx,
            int maxQueued,
            long lockTimeoutMs,
            long statementTimeoutMs) {
        this.pool = pool;
        this.registry = registry;
        this.tx = tx;
        this.maxQueued = maxQueued;
        this.settings = PgSql.READ_COMMITTED + "; SET LOCAL lock_timeout = " + lockTimeoutMs
                + "; SET LOCAL statement_timeout = " + statementTimeoutMs;
    }

    /**
     * Most partition transactions run in one database transaction (group commit). Kept well below 64, the
     * per-backend subtransaction cache of PostgreSQL (each batched transaction runs in a savepoint).
     */
    static final int MAX_GROUP = 16;

    /** A queued partition transaction: its work and where its outcome goes (after the commit). */
    static final class Job {
        final Function<PushTx, Uni<Object>> work;
        /** The work's announced first reads, or null. */
        final PushReadHint hint;

        final CompletableFuture<Object> result = new CompletableFuture<>();
        Object item;
        Throwable failure;

        Job(Function<PushTx, Uni<Object>> work, PushReadHint hint) {
            this.work = work;
            this.hint = hint;
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
     * delivered only after that commit. Writes of {@link PushTransaction} are pipelined; in a group of several
     * works they are awaited once, before the {@code COMMIT}, so the works follow each other without a round trip
     * between them (see {@link #runGroup(String, List, boolean, boolean[])}); a lone work awaits its own.
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
                    drain(partition, q);
                }
                break;
            }
            return Uni.createFrom().completionStage(job.result).map(o -> (T) o);
        });
    }

    private void drain(String partition, PartitionQueue q) {
        List<Job> group = new ArrayList<>();
        synchronized (q) {
            while (group.size() < MAX_GROUP && !q.jobs.isEmpty()) {
                group.add(q.jobs.poll());
            }
            if (group.isEmpty()) {
                q.running = false;
                q.dead = true;
                partitionQueues.remove(partition, q);
                return;
            }
        }
        runGroup(partition, group)
                .subscribe()
                .with(
                        v -> {
                            deliver(group, null);
                            drain(partition, q);
                        },
                        e -> {
                            deliver(group, e);
                            drain(partition, q);
                        });
    }

    private static void deliver(List<Job> group, Throwable groupFailure) {
        for (Job j : group) {
            if (groupFailure != null) {
                j.result.completeExceptionally(PgSql.busyOr(groupFailure));
            } else if (j.failure != null) {
                j.result.completeExceptionally(PgSql.busyOr(j.failure));
            } else {
                j.result.complete(j.item);
            }
        }
    }

    /**
     * One database transaction for {@code group}; fails (everything rolled back) when the lock, a lone
     * work, a read-ahead statement or the commit fails, else each job holds its own outcome.
     */
    private Uni<Void> runGroup(String partition, List<Job> group) {
        if (group.size() == 1) {
            return runGroup(partition, group, false, new boolean[1]);
        }
        boolean[] rerunnable = {false};
        return runGroup(partition, group, true, rerunnable)
                .onFailure(e -> rerunnable[0] && PgSql.busy(e) == null && !PgSql.refusedByDatabase(e))
                .recoverWithUni(e -> {
                    // a work failed on the answer to one of its writes (a duplicate idempotency record) somewhere
                    // in the pipeline: nothing of the group committed; again with each work's writes awaited in
                    // its savepoint, so the failure stays with its work
                    pipelinedReruns.increment();
                    for (Job j : group) {
                        j.item = null;
                        j.failure = null;
                    }
                    return runGroup(partition, group, false, new boolean[1]);
                });
    }

    /**
     * One attempt at {@code group}'s transaction. {@code pipelined}: each work's writes are sent and not awaited
     * (the next work's savepoint and statements follow them in the same pipeline) and the group awaits them all
     * before its {@code COMMIT}: one round trip for the works of a group instead of one per work. A failed write
     * answer that fails its work (a duplicate idempotency record) then fails the attempt, and
     * {@link #runGroup(String, List)} runs the group again awaiting each work's writes, so the failure stays with
     * its work; a statement PostgreSQL refuses ({@link PgSql#refusedByDatabase}) fails the group either way, so it
     * is not run again. {@code rerunnable} is set once the lock is held and the works start, and cleared when the
     * {@code COMMIT} is sent (from then on the attempt may have committed: it is never run again).
     */
    private Uni<Void> runGroup(String partition, List<Job> group, boolean pipelined, boolean[] rerunnable) {
        return pool.getConnection().chain(conn -> {
            CompletableFuture<Transaction> begin = conn.begin().subscribeAsCompletionStage();
            // READ COMMITTED (each statement sees what committed before it, the gate read after the lock
            // included) and the timeouts, before the lock: one simple-query message in the same round trip
            CompletableFuture<RowSet<Row>> set = conn.query(settings).execute().subscribeAsCompletionStage();
            CompletableFuture<RowSet<Row>> lock = conn.preparedQuery(registry.lockSql)
                    .execute(Tuple.of(partition))
                    .subscribeAsCompletionStage();
            // A statement of its own, not folded into the lock: one statement's gate columns would come from a
            // snapshot taken before the lock wait, missing what the previous lock holder committed (§2.4: the
            // gate is re-evaluated under the lock). A plpgsql function doing both (a fresh snapshot per
            // statement) measured no cheaper for PostgreSQL than the two pipelined statements.
            CompletableFuture<RowSet<Row>> gate = conn.preparedQuery(tx.gates.serveGateAllVersions)
                    .execute(Tuple.of(partition))
                    .subscribeAsCompletionStage();
            // The hinted works' first reads, pipelined behind the gate read: they run after the lock is granted
            // (each statement its own snapshot), in the same round trip.
            PushReadAhead pre = new PushReadAhead(tx.results, tx.installed, conn, partition, group);
            GroupState[] ran = {null};
            RecentCommits.Pending[] pending = {RecentCommits.Pending.NONE};
            return Uni.createFrom()
                    .completionStage(begin)
                    .chain(dbTx -> Uni.createFrom()
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
                                                    .call(ptx::flush)
                                                    .invoke(item -> {
                                                        only.item = item;
                                                        gs.appended.addAll(ptx.appended);
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
                            .call(() -> PgSql.allSettled(ran[0].unawaited))
                            .call(() -> {
                                // the group's commits, in sequence order, for the pulls and the fan-out that follow:
                                // pending until the COMMIT answers (its NOTIFY may reach the fan-out first)
                                GroupState gs = ran[0];
                                pending[0] = tx.recent.prepare(partition, gs.locked.logEpoch(), gs.appended);
                                rerunnable[0] = false;
                                return dbTx.commit();
                            })
                            .invoke(() -> pending[0].committed())
                            .onFailure()
                            .invoke(e -> pending[0].abandoned())
                            .onCancellation()
                            .invoke(() -> pending[0].abandoned())
                            .onFailure()
                            .call(e -> dbTx.rollback().onFailure().recoverWithNull()))
                    .onFailure()
                    .call(e -> Uni.createFrom()
                            .completionStage(set.handle((x, y) -> null)
                                    .thenCombine(lock.handle((x, y) -> null), (x, y) -> null)
                                    .thenCombine(gate.handle((x, y) -> null), (x, y) -> null)
                                    .thenCombine(pre.settled(), (x, y) -> null))
                            .replaceWithVoid())
                    .eventually(conn::close);
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
        /** Whether each work's writes are left unawaited until the commit (see {@link #runGroup(String, List, boolean, boolean[])}). */
        final boolean pipelined;
        /** The works' writes sent and not awaited yet, in order; awaited before the {@code COMMIT}. */
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
