package dev.syncular.server.sync;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Fairness between actors on one pod: every sync round — {@code POST /sync} and §8.7 socket rounds alike, since
 * both run {@link SyncEngine#handle} — is admitted against per-actor and per-partition concurrency limits before
 * it reads or writes storage, and holds its place until its frames are planned (or it fails, or is cancelled). A
 * round that would pass a limit is refused at once with {@code sync.rate_limited} (retryable; §10.2), whose
 * details name the limit and carry {@code retryAfterMs}; the HTTP binding answers it 429 with {@code Retry-After},
 * a socket round in-band. Nothing of a refused round was read from or written to storage, so the same request may retry.
 *
 * <p>An actor is identified within its partition ({@code partition}, {@code actorId}): actor ids of different
 * partitions are different actors. The limits:
 * <ul>
 *   <li>{@code roundsPerActor}: rounds of one actor in flight;</li>
 *   <li>{@code roundsPerPartition}: rounds of one partition in flight (every actor together);</li>
 *   <li>{@code operationsPerActor}: push operations of one actor's rounds in flight — a round is always admitted
 *       when the actor has none in flight, so one commit of any size can proceed alone;</li>
 *   <li>{@code bootstrapsPerPartition}, {@code bootstrapsPerPod}: rounds that start or resume a bootstrap (§4.7) in
 *       flight, of one partition and on the pod (issue 45: a bootstrap storm reads and encodes whole tables, and must
 *       leave the pool's connections and the workers to the other tenants);</li>
 *   <li>{@code roundsPerPod}: rounds in flight on the pod, every partition together (issue 44: the pod's memory and
 *       its connection pool bound what it can hold at once; past that a round is refused, not queued).</li>
 * </ul>
 * and, for rounds with pushes, the rates of {@link PushRate}: operations and bytes per second of the partition and
 * of the actor ({@code partition_push_operations}, {@code partition_push_bytes}, {@code actor_push_operations},
 * {@code actor_push_bytes}), whose refusals carry the time until the rate allows the round.
 * {@code 0} turns a limit off. One flooding actor can therefore hold at most its own share of the partition's
 * serialized pushes (§6.3), and the other actors' rounds keep their places.
 */
public final class RoundAdmission {
    /** No limits: every round is admitted (the engine's default). */
    public static final RoundAdmission NONE = new RoundAdmission(
            new Limits(0, 0, 0, 0, 0, 0, Duration.ofSeconds(1)), PushRate.OFF, Listener.NONE, RefusalPacing.OFF);

    public static final String ACTOR_ROUNDS = "actor_rounds";
    public static final String PARTITION_ROUNDS = "partition_rounds";
    public static final String ACTOR_OPERATIONS = "actor_operations";
    public static final String POD_ROUNDS = "pod_rounds";
    public static final String PARTITION_BOOTSTRAPS = "partition_bootstraps";
    public static final String POD_BOOTSTRAPS = "pod_bootstraps";

    /** Every limit a round may be refused by: the {@code reason} of its {@code sync.rate_limited}. */
    public static final List<String> LIMITS = List.of(
            ACTOR_ROUNDS,
            PARTITION_ROUNDS,
            ACTOR_OPERATIONS,
            POD_ROUNDS,
            PARTITION_BOOTSTRAPS,
            POD_BOOTSTRAPS,
            PushRate.PARTITION_OPERATIONS,
            PushRate.PARTITION_BYTES,
            PushRate.ACTOR_OPERATIONS,
            PushRate.ACTOR_BYTES);

    /**
     * What a round asks for: its push operations and their bytes (row ids and payloads), and whether a subscription
     * of it starts or resumes a bootstrap (§4.7: no cursor, or a bootstrap state).
     */
    public record Demand(int operations, long bytes, boolean bootstraps) {
        /** A round of {@code operations} pushed operations of {@code bytes} bytes without a bootstrap. */
        public static Demand pushing(int operations, long bytes) {
            return new Demand(operations, bytes, false);
        }
    }

    /** The limits ({@code 0} = off) and the retry hint of a refusal. */
    public record Limits(
            int roundsPerActor,
            int roundsPerPartition,
            long operationsPerActor,
            int roundsPerPod,
            int bootstrapsPerPartition,
            int bootstrapsPerPod,
            Duration retryAfter) {
        public Limits {
            if (roundsPerActor < 0
                    || roundsPerPartition < 0
                    || operationsPerActor < 0
                    || roundsPerPod < 0
                    || bootstrapsPerPartition < 0
                    || bootstrapsPerPod < 0) {
                throw new IllegalArgumentException("fairness limits are 0 (off) or positive");
            }
        }

        boolean off() {
            return roundsPerActor == 0
                    && roundsPerPartition == 0
                    && operationsPerActor == 0
                    && roundsPerPod == 0
                    && bootstrapsPerPartition == 0
                    && bootstrapsPerPod == 0;
        }
    }

    /** Told of admissions, releases and refusals (metrics). */
    public interface Listener {
        Listener NONE = new Listener() {};

        default void admitted() {}

        default void released() {}

        /**
         * {@code limit}: {@link #ACTOR_ROUNDS}, {@link #PARTITION_ROUNDS}, {@link #ACTOR_OPERATIONS} or
         * {@link #POD_ROUNDS}, or one of {@link PushRate}'s.
         */
        default void refused(String limit) {}

        /** A round of {@code partition} was refused by {@code limit}; by default {@link #refused(String)}. */
        default void refused(String partition, String limit) {
            refused(limit);
        }
    }

    private final Limits limits;
    private final PushRate rate;
    private final Listener listener;
    private final RefusalPacing pacing;
    /** (partition, actor) → {rounds, operations} in flight; an entry exists only while non-zero. */
    private final Map<String, long[]> actors = new HashMap<>();
    /** partition → {rounds, rounds with a bootstrap} in flight. */
    private final Map<String, int[]> partitions = new HashMap<>();
    /** Rounds in flight on this pod, every partition together. */
    private int podRounds;
    /** Rounds with a bootstrap in flight on this pod. */
    private int podBootstraps;

    /** @param pacing how long a refusal is held before it is answered ({@link RefusalPacing#OFF}: at once) */
    public RoundAdmission(Limits limits, PushRate rate, Listener listener, RefusalPacing pacing) {
        this.limits = limits;
        this.rate = rate;
        this.listener = listener;
        this.pacing = pacing;
    }

    /**
     * Runs {@code round} if the actor's and the partition's places allow it, releasing them when it terminates;
     * otherwise a {@code sync.rate_limited} failure at once, {@code round} never called. {@code bytes}: what the
     * round's pushes carry (row ids and payloads), drawn from the push rates with {@code operations}.
     */
    public <T> Uni<T> admit(String partition, String actorId, Demand demand, Supplier<Uni<T>> round) {
        if (limits.off() && rate.off()) {
            return Uni.createFrom().deferred(round::get);
        }
        String actor = partition + '\u0000' + actorId;
        return Uni.createFrom().deferred(() -> {
            PushRate.Refusal refused = acquire(partition, actor, demand);
            if (refused != PushRate.Refusal.NONE) {
                listener.refused(partition, refused.limit());
                return answer(refused, demand.bytes());
            }
            listener.admitted();
            boolean[] released = {false};
            Runnable release = () -> {
                synchronized (released) {
                    if (released[0]) {
                        return;
                    }
                    released[0] = true;
                }
                release(partition, actor, demand);
                listener.released();
            };
            Uni<T> run;
            try {
                run = round.get();
            } catch (RuntimeException e) {
                release.run();
                return Uni.createFrom().failure(e);
            }
            return run.onTermination().invoke(release);
        });
    }

    /**
     * Issue 45, a refusal that costs no decoding: whether a round of {@code actorId} in {@code partition} would find
     * the round places taken now ({@code actor_rounds}, {@code partition_rounds}, {@code pod_rounds}: limits that do not
     * depend on what the round carries), asked by a binding before it reads the request's body. A failure refuses it
     * as {@link #admit} would (counted, held, §10.2 {@code sync.rate_limited}); an item lets the binding read the body,
     * and {@link #admit} decides for good.
     */
    public Uni<Void> admissible(String partition, String actorId) {
        if (limits.off()) {
            return Uni.createFrom().voidItem();
        }
        String limit;
        synchronized (this) {
            limit = roundPlaces(partition, partition + '\u0000' + actorId);
        }
        if (limit == null) {
            return Uni.createFrom().voidItem();
        }
        listener.refused(partition, limit);
        return answer(new PushRate.Refusal(limit, limits.retryAfter().toMillis()), 0);
    }

    /** A refusal's answer, held (RefusalPacing) out of its own wait: it says what is left of the wait. */
    private <T> Uni<T> answer(PushRate.Refusal refused, long pushedBytes) {
        long hold = pacing.holdMs(refused.retryAfterMs(), pushedBytes);
        SyncError answer = refusal(refused.limit(), refused.retryAfterMs() - hold);
        return hold <= 0
                ? Uni.createFrom().failure(answer)
                : pacing.hold(hold).chain(() -> Uni.createFrom().failure(answer));
    }

    /** Takes the places and the push rates' tokens, or names the limit that refuses them (nothing taken then). */
    private synchronized PushRate.Refusal acquire(String partition, String actor, Demand demand) {
        int operations = demand.operations();
        String limit = concurrency(partition, actor, demand);
        if (limit != null) {
            return new PushRate.Refusal(limit, limits.retryAfter().toMillis());
        }
        PushRate.Refusal refused = rate.take(partition, actor, operations, demand.bytes());
        if (refused != PushRate.Refusal.NONE) {
            return refused;
        }
        long[] a = actors.get(actor);
        podRounds++;
        if (a == null) {
            actors.put(actor, new long[] {1, operations});
        } else {
            a[0]++;
            a[1] += operations;
        }
        int[] p = partitions.computeIfAbsent(partition, k -> new int[2]);
        p[0]++;
        if (demand.bootstraps()) {
            p[1]++;
            podBootstraps++;
        }
        return PushRate.Refusal.NONE;
    }

    /** The round-count limit a round of {@code actor} would pass now, or {@code null} (the caller locks). */
    private String roundPlaces(String partition, String actor) {
        long[] a = actors.get(actor);
        int[] p = partitions.get(partition);
        if (limits.roundsPerActor() > 0 && a != null && a[0] >= limits.roundsPerActor()) {
            return ACTOR_ROUNDS;
        }
        if (limits.roundsPerPartition() > 0 && p != null && p[0] >= limits.roundsPerPartition()) {
            return PARTITION_ROUNDS;
        }
        if (limits.roundsPerPod() > 0 && podRounds >= limits.roundsPerPod()) {
            return POD_ROUNDS;
        }
        return null;
    }

    /** The concurrency limit the round would pass, or {@code null}. */
    private String concurrency(String partition, String actor, Demand demand) {
        int operations = demand.operations();
        long[] a = actors.get(actor);
        long actorRounds = a == null ? 0 : a[0];
        long actorOps = a == null ? 0 : a[1];
        int[] p = partitions.get(partition);
        int partitionBootstraps = p == null ? 0 : p[1];
        if (limits.roundsPerActor() > 0 && actorRounds >= limits.roundsPerActor()) {
            return ACTOR_ROUNDS;
        }
        if (limits.operationsPerActor() > 0 && actorRounds > 0 && actorOps + operations > limits.operationsPerActor()) {
            return ACTOR_OPERATIONS;
        }
        String places = roundPlaces(partition, actor);
        if (places != null) {
            return places;
        }
        if (demand.bootstraps()
                && limits.bootstrapsPerPartition() > 0
                && partitionBootstraps >= limits.bootstrapsPerPartition()) {
            return PARTITION_BOOTSTRAPS;
        }
        if (demand.bootstraps() && limits.bootstrapsPerPod() > 0 && podBootstraps >= limits.bootstrapsPerPod()) {
            return POD_BOOTSTRAPS;
        }
        return null;
    }

    private synchronized void release(String partition, String actor, Demand demand) {
        int operations = demand.operations();
        podRounds--;
        if (demand.bootstraps()) {
            podBootstraps--;
        }
        long[] a = actors.get(actor);
        if (a != null && --a[0] <= 0) {
            actors.remove(actor);
        } else if (a != null) {
            a[1] -= operations;
        }
        int[] p = partitions.get(partition);
        if (p != null && demand.bootstraps()) {
            p[1]--;
        }
        if (p != null && --p[0] <= 0) {
            partitions.remove(partition);
        }
    }

    private static SyncError refusal(String limit, long retryAfterMs) {
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("reason", limit);
        details.put("retryAfterMs", retryAfterMs);
        return new SyncError(ErrorCode.RATE_LIMITED, "too many rounds or pushes; retry later", details);
    }
}
