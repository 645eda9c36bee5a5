package dev.syncular.server.sync;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
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
 *   <li>{@code roundsPerPod}: rounds in flight on the pod, every partition together (issue 44: the pod's memory and
 *       its connection pool bound what it can hold at once; past that a round is refused, not queued).</li>
 * </ul>
 * {@code 0} turns a limit off. One flooding actor can therefore hold at most its own share of the partition's
 * serialized pushes (§6.3), and the other actors' rounds keep their places.
 */
public final class RoundAdmission {
    /** No limits: every round is admitted (the engine's default). */
    public static final RoundAdmission NONE =
            new RoundAdmission(new Limits(0, 0, 0, 0, Duration.ofSeconds(1)), Listener.NONE);

    public static final String ACTOR_ROUNDS = "actor_rounds";
    public static final String PARTITION_ROUNDS = "partition_rounds";
    public static final String ACTOR_OPERATIONS = "actor_operations";
    public static final String POD_ROUNDS = "pod_rounds";

    /** The limits ({@code 0} = off) and the retry hint of a refusal. */
    public record Limits(
            int roundsPerActor,
            int roundsPerPartition,
            long operationsPerActor,
            int roundsPerPod,
            Duration retryAfter) {
        public Limits {
            if (roundsPerActor < 0 || roundsPerPartition < 0 || operationsPerActor < 0 || roundsPerPod < 0) {
                throw new IllegalArgumentException("fairness limits are 0 (off) or positive");
            }
        }

        boolean off() {
            return roundsPerActor == 0 && roundsPerPartition == 0 && operationsPerActor == 0 && roundsPerPod == 0;
        }
    }

    /** Told of admissions, releases and refusals (metrics). */
    public interface Listener {
        Listener NONE = new Listener() {};

        default void admitted() {}

        default void released() {}

        /**
         * {@code limit}: {@link #ACTOR_ROUNDS}, {@link #PARTITION_ROUNDS}, {@link #ACTOR_OPERATIONS} or
         * {@link #POD_ROUNDS}.
         */
        default void refused(String limit) {}

        /** A round of {@code partition} was refused by {@code limit}; by default {@link #refused(String)}. */
        default void refused(String partition, String limit) {
            refused(limit);
        }
    }

    private final Limits limits;
    private final Listener listener;
    /** (partition, actor) → {rounds, operations} in flight; an entry exists only while non-zero. */
    private final Map<String, long[]> actors = new HashMap<>();
    /** partition → rounds in flight. */
    private final Map<String, int[]> partitions = new HashMap<>();
    /** Rounds in flight on this pod, every partition together. */
    private int podRounds;

    public RoundAdmission(Limits limits, Listener listener) {
        this.limits = limits;
        this.listener = listener;
    }

    public Limits limits() {
        return limits;
    }

    /**
     * Runs {@code round} if the actor's and the partition's places allow it, releasing them when it terminates;
     * otherwise a {@code sync.rate_limited} failure at once, {@code round} never called.
     */
    public <T> Uni<T> admit(String partition, String actorId, int operations, Supplier<Uni<T>> round) {
        if (limits.off()) {
            return Uni.createFrom().deferred(round::get);
        }
        String actor = partition + '\u0000' + actorId;
        return Uni.createFrom().deferred(() -> {
            String refused = acquire(partition, actor, operations);
            if (refused != null) {
                listener.refused(partition, refused);
                return Uni.createFrom().failure(refusal(refused));
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
                release(partition, actor, operations);
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

    /** Takes the places, or names the limit that refuses them (nothing taken then). */
    private synchronized String acquire(String partition, String actor, int operations) {
        long[] a = actors.get(actor);
        long actorRounds = a == null ? 0 : a[0];
        long actorOps = a == null ? 0 : a[1];
        int partitionRounds = partitions.containsKey(partition) ? partitions.get(partition)[0] : 0;
        if (limits.roundsPerActor() > 0 && actorRounds >= limits.roundsPerActor()) {
            return ACTOR_ROUNDS;
        }
        if (limits.operationsPerActor() > 0 && actorRounds > 0 && actorOps + operations > limits.operationsPerActor()) {
            return ACTOR_OPERATIONS;
        }
        if (limits.roundsPerPartition() > 0 && partitionRounds >= limits.roundsPerPartition()) {
            return PARTITION_ROUNDS;
        }
        if (limits.roundsPerPod() > 0 && podRounds >= limits.roundsPerPod()) {
            return POD_ROUNDS;
        }
        podRounds++;
        if (a == null) {
            actors.put(actor, new long[] {1, operations});
        } else {
            a[0]++;
            a[1] += operations;
        }
        partitions.computeIfAbsent(partition, p -> new int[1])[0]++;
        return null;
    }

    private synchronized void release(String partition, String actor, int operations) {
        podRounds--;
        long[] a = actors.get(actor);
        if (a != null && --a[0] <= 0) {
            actors.remove(actor);
        } else if (a != null) {
            a[1] -= operations;
        }
        int[] p = partitions.get(partition);
        if (p != null && --p[0] <= 0) {
            partitions.remove(partition);
        }
    }

    private SyncError refusal(String limit) {
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("reason", limit);
        details.put("retryAfterMs", limits.retryAfter().toMillis());
        return new SyncError(ErrorCode.RATE_LIMITED, "too many concurrent rounds; retry later", details);
    }
}
