package dev.syncular.server.storage.postgres;

import dev.syncular.server.storage.PullReads;
import dev.syncular.server.storage.ReadReplicas;
import dev.syncular.server.storage.ReadRoute;
import dev.syncular.server.storage.ReplicaObserver;
import dev.syncular.server.storage.ReplicaObserver.Outcome;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import org.jboss.logging.Logger;

/**
 * Hot standbys of the storage's database that pull-only rounds read from ({@code syncular.storage.replicas};
 * docs/SCALING.md, "Reads from replicas"), in turn among those in rotation.
 *
 * <p><b>Freshness rule.</b> A replica serves a round of partition {@code p} only if {@code seq(p)}, the partition's
 * {@code sync_partitions.max_commit_seq} read on the replica, is at least {@code need = max(heldSeq,
 * announced(p))}: what the client holds (its cursors, a resumed bootstrap's pin) and the highest commit of {@code p}
 * this pod heard the primary announce (§8.2). The round's pull then answers as of {@code min(seq(p), entry)} at the
 * newest, where {@code entry} is the primary's {@code maxCommitSeq} of the round's entry read. Why that is never
 * older than {@code need}, nor a wrong window:
 * <ol>
 *   <li>a push writes its commits and {@code max_commit_seq} in one transaction, so a snapshot that shows
 *       {@code seq(p)} shows every commit of {@code p} through {@code seq(p)} and the row state they leave;
 *   <li>a hot standby replays the primary's WAL in commit order and a later statement's snapshot contains every
 *       transaction an earlier one did, so each later read of the round on that replica sees at least those
 *       commits: a log window {@code (cursor, seq(p)]} is complete and a bootstrap's rows are at least as new as
 *       its pin {@code seq(p)} (they may be newer, as on the primary, where pages are read one after the other);
 *   <li>{@code seq(p) >= need >= cursor}, so no answer moves a client back, and a commit this pod announced (and
 *       may have woken the client for, §8.3) is in the answer.
 * </ol>
 * Otherwise ({@code behind}), or when the replica is out of rotation or fails ({@code unavailable}), the round reads
 * the primary. A replica read that fails mid-round is re-read on the primary, which holds everything the replica
 * does. After a re-{@code LISTEN} (announcements lost, {@link #announcementsLost}) no replica serves until its
 * replay has reached the primary's WAL position read after the loss.
 *
 * <p><b>Bounded.</b> The announced sequences take at most {@link #ANNOUNCED_BUDGET_BYTES} (estimated): past it they
 * are forgotten all at once behind the same fence as lost announcements — a commit heard before it was committed
 * before the WAL position read after it, so a replica that has replayed that far holds every forgotten commit, and
 * {@code need} may fall back to what the client holds. With many thousands of partitions announcing, replicas then
 * pause for at most one check interval per budget's worth of new partitions.
 *
 * <p><b>Rotation.</b> Every {@code checkInterval} each replica's replay lag is measured against the primary's WAL
 * position ({@link StandbyReplica#check}); past {@code maxLag}, or on a failed check or read, it leaves rotation,
 * and the first check within {@code maxLag} puts it back.
 */
public final class PostgresReadReplicas implements ReadReplicas {
    private static final Logger LOG = Logger.getLogger(PostgresReadReplicas.class);
    /**
     * The primary's WAL insert position: past every commit acknowledged so far, also under {@code synchronous_commit
     * = off}, where a commit returns while its record may still be in the WAL buffers — behind the write position
     * ({@code pg_current_wal_lsn()}), which a fence at the write position let a paused standby pass.
     */
    private static final String PRIMARY_LSN = "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint";
    /** The estimated bytes of the announced sequences this pod keeps (about 50,000 partitions of 40-byte ids). */
    public static final long ANNOUNCED_BUDGET_BYTES = 8L << 20;

    /** One configured replica: its name ({@code host:port/db}, the metric tag) and its pool. */
    public record Replica(String name, Pool pool) {}

    private final Pool primaryPool;
    private final PullReads primary;
    private final List<StandbyReplica> replicas;
    private final long maxLagMs;
    private final LongSupplier clockMs;
    private final ReplicaObserver observer;
    private final Map<String, Long> announced = new ConcurrentHashMap<>();
    /** Estimated bytes of {@link #announced}. */
    private final AtomicLong announcedBytes = new AtomicLong();

    private final AtomicInteger next = new AtomicInteger();
    private final AtomicBoolean checking = new AtomicBoolean();
    /** WAL position (bytes from {@code 0/0}) every replica must have replayed after lost announcements. */
    private volatile long fenceLsn = -1;
    /** Fences raised so far: only the newest one's position read lowers {@link #fenceLsn} from its maximum. */
    private final AtomicLong fences = new AtomicLong();

    private volatile Vertx vertx;
    private volatile long timer = -1;

    /**
     * @param storage     the primary storage (its schema and statements; its pull reads take failed replica reads)
     * @param primaryPool the primary's pool (the WAL position of each check)
     * @param replicas    the standbys, in rotation order
     * @param maxLag      the replay lag past which a replica leaves rotation
     */
    public PostgresReadReplicas(
            PostgresSyncStorage storage,
            Pool primaryPool,
            List<Replica> replicas,
            Duration maxLag,
            LongSupplier clockMs,
            ReplicaObserver observer) {
        this.primaryPool = primaryPool;
        this.primary = storage;
        this.maxLagMs = maxLag.toMillis();
        this.clockMs = clockMs;
        this.observer = observer;
        List<StandbyReplica> list = new ArrayList<>();
        for (Replica r : replicas) {
            StandbyReplica s = new StandbyReplica(
                    r.name(), r.pool(), storage.readsOn(r.pool()), storage.qualified("sync_partitions"));
            list.add(s);
            observer.watch(s.name, s::lagSeconds, () -> s.inRotation() ? 1 : 0);
        }
        this.replicas = List.copyOf(list);
    }

    /** The replicas' names, in rotation order. */
    public List<String> names() {
        return replicas.stream().map(r -> r.name).toList();
    }

    /** Whether replica {@code name} is in rotation now. */
    public boolean inRotation(String name) {
        return replicas.stream().anyMatch(r -> r.name.equals(name) && r.inRotation());
    }

    @Override
    public Uni<ReadRoute> route(String partition, long heldSeq) {
        if (replicas.isEmpty()) {
            return Uni.createFrom().item(ReadRoute.PRIMARY);
        }
        long need = Math.max(heldSeq, announced.getOrDefault(partition, -1L));
        StandbyReplica replica = pick();
        if (replica == null) {
            return Uni.createFrom().item(ReadRoute.PRIMARY);
        }
        return replica.partitionSeq(partition)
                .map(seq -> {
                    if (seq < 0 || seq < need) {
                        observer.read(replica.name, Outcome.BEHIND);
                        return ReadRoute.PRIMARY;
                    }
                    observer.read(replica.name, Outcome.SERVED);
                    return new ReadRoute(true, replica.reads(primary), seq);
                })
                .onFailure()
                .recoverWithItem(e -> {
                    replica.failed(e);
                    LOG.debugf("replica %s failed a read, out of rotation: %s", replica.name, e.toString());
                    observer.read(replica.name, Outcome.UNAVAILABLE);
                    return ReadRoute.PRIMARY;
                });
    }

    /**
     * A snapshot read that checks freshness itself — a remote query (REMOTE.md §2), which reads the partition's
     * {@code max_commit_seq} in the same {@code REPEATABLE READ} transaction as its statement — on a replica in
     * rotation, else on {@code primaryPool}. {@code work(pool, need)} must fail with {@link Behind} when the
     * partition's sequence in its snapshot is below {@code need} (the highest commit of the partition this pod heard
     * announced); it then reruns on the primary with {@code need = -1}. A failure {@code replicaFault} accepts (the
     * replica's, not the statement's) takes the replica out of rotation and reruns on the primary; any other failure
     * is the caller's.
     */
    public <T> Uni<T> snapshot(
            String partition,
            Pool primaryPool,
            BiFunction<Pool, Long, Uni<T>> work,
            Predicate<Throwable> replicaFault) {
        if (replicas.isEmpty()) {
            return work.apply(primaryPool, -1L);
        }
        StandbyReplica replica = pick();
        if (replica == null) {
            return work.apply(primaryPool, -1L);
        }
        long need = announced.getOrDefault(partition, -1L);
        return work.apply(replica.pool, need)
                .invoke(v -> observer.read(replica.name, Outcome.SERVED))
                .onFailure(e -> e instanceof Behind || replicaFault.test(e))
                .recoverWithUni(e -> {
                    if (e instanceof Behind) {
                        observer.read(replica.name, Outcome.BEHIND);
                    } else {
                        replica.failed(e);
                        observer.read(replica.name, Outcome.UNAVAILABLE);
                    }
                    return work.apply(primaryPool, -1L);
                });
    }

    /**
     * The next replica in rotation that has replayed past any fence of lost announcements, or {@code null} (counted:
     * {@code unavailable} when none is in rotation, {@code behind} when the fence holds it back).
     */
    private StandbyReplica pick() {
        int start = Math.floorMod(next.getAndIncrement(), replicas.size());
        for (int i = 0; i < replicas.size(); i++) {
            StandbyReplica r = replicas.get((start + i) % replicas.size());
            if (r.inRotation()) {
                if (fenceLsn >= 0 && r.replayLsn() < fenceLsn) {
                    observer.read(r.name, Outcome.BEHIND);
                    return null;
                }
                return r;
            }
        }
        observer.read(replicas.get(start).name, Outcome.UNAVAILABLE);
        return null;
    }

    /** {@link #snapshot}'s work found the replica behind what the read needs. */
    public static final class Behind extends RuntimeException {
        public Behind() {
            super("the replica has not replayed far enough", null, false, false);
        }
    }

    @Override
    public void announced(String partition, long seq) {
        if (replicas.isEmpty()) {
            return;
        }
        boolean[] added = {false};
        announced.compute(partition, (p, held) -> {
            if (held == null) {
                added[0] = true;
                return seq;
            }
            return Math.max(held, seq);
        });
        if (added[0] && announcedBytes.addAndGet(entryBytes(partition)) > ANNOUNCED_BUDGET_BYTES) {
            forgetAnnounced();
        }
    }

    /** A map entry, its key and its boxed value, by rule of thumb. */
    private static long entryBytes(String partition) {
        return 96 + 2L * partition.length();
    }

    /** Past the budget: every announced sequence forgotten, behind a fence (see the class comment). */
    private void forgetAnnounced() {
        fence();
        for (String p : announced.keySet()) {
            if (announced.remove(p) != null) {
                announcedBytes.addAndGet(-entryBytes(p));
            }
        }
        LOG.debugf("announced sequences past %d bytes: forgotten behind a WAL fence", ANNOUNCED_BUDGET_BYTES);
    }

    /** The estimated bytes of the announced sequences held now. */
    long announcedBytes() {
        return announcedBytes.get();
    }

    @Override
    public void announcementsLost() {
        if (!replicas.isEmpty()) {
            fence();
        }
    }

    /**
     * No replica serves until it has replayed the primary's WAL position read now: every commit announced so far was
     * committed before it.
     */
    private void fence() {
        // until the WAL position is known no replica may serve: every replay position is below Long.MAX_VALUE
        long generation = fences.incrementAndGet();
        fenceLsn = Long.MAX_VALUE;
        primaryPool
                .query(PRIMARY_LSN)
                .execute()
                .map(rs -> PgSql.first(rs).getLong(0))
                .subscribe()
                .with(
                        lsn -> {
                            if (fences.get() == generation) { // a later fence reads a later position itself
                                fenceLsn = lsn;
                            }
                        },
                        e -> LOG.debugf("primary WAL position unread: %s", e.toString()));
    }

    /**
     * One lag check of every replica (the periodic timer's work; skipped while one runs). Never fails: a failed
     * check takes the replica out of rotation; a failed read of the primary's position skips the check.
     */
    public Uni<Void> check() {
        if (replicas.isEmpty() || !checking.compareAndSet(false, true)) {
            return Uni.createFrom().voidItem();
        }
        long generation = fences.get();
        return primaryPool
                .query(PRIMARY_LSN)
                .execute()
                .map(rs -> PgSql.first(rs).getLong(0))
                .invoke(lsn -> {
                    // a fence whose position was not read, raised before this read began: now it is
                    if (fenceLsn == Long.MAX_VALUE && fences.get() == generation) {
                        fenceLsn = lsn;
                    }
                })
                .flatMap(lsn -> Multi.createFrom()
                        .iterable(replicas)
                        .onItem()
                        .transformToUniAndMerge(r -> r.check(lsn, clockMs.getAsLong(), maxLagMs))
                        .collect()
                        .last())
                .onFailure()
                .invoke(e -> LOG.debugf("replica check skipped, primary WAL position unread: %s", e.toString()))
                .onFailure()
                .recoverWithNull()
                .eventually(() -> checking.set(false))
                .replaceWithVoid();
    }

    /**
     * Checks every replica now and then every {@code interval} on {@code vertx}'s timer (non-blocking reads; a check
     * still running skips the next tick).
     */
    public void start(Vertx vertx, Duration interval) {
        if (replicas.isEmpty()) {
            return;
        }
        this.vertx = vertx;
        check().subscribe().with(v -> {}, e -> {});
        timer = vertx.setPeriodic(
                Math.max(1, interval.toMillis()), id -> check().subscribe().with(v -> {}, e -> {}));
    }

    /** Stops the checks and closes the replicas' pools. */
    public Uni<Void> close() {
        if (timer >= 0 && vertx != null) {
            vertx.cancelTimer(timer);
        }
        return Multi.createFrom()
                .iterable(replicas)
                .onItem()
                .transformToUniAndMerge(r -> r.pool.close())
                .collect()
                .last()
                .replaceWithVoid();
    }
}
