package dev.syncular.server.sync;

import io.quarkus.runtime.configuration.MemorySize;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

/**
 * {@code syncular.fairness.*}: per-actor and per-partition concurrency limits on sync rounds ({@code POST /sync}
 * and socket rounds alike), per pod. A round past a limit is answered 429 {@code sync.rate_limited} with
 * {@code Retry-After} (in-band on a socket) before the round reads or writes storage (the HTTP body is already
 * read and decoded by then). {@code 0} turns a limit off.
 */
@ConfigMapping(prefix = "syncular.fairness")
public interface FairnessConfig {
    /** Rounds of one actor (of one partition) in flight on this pod. */
    @WithDefault("8")
    int maxRoundsPerActor();

    /** Rounds of one partition in flight on this pod, every actor together. */
    @WithDefault("64")
    int maxRoundsPerPartition();

    /**
     * Push operations in the rounds of one actor in flight on this pod; a round is always admitted when the
     * actor has none in flight, so a single commit of any size (up to {@code limits.max-operations-per-request})
     * can proceed alone.
     */
    @WithDefault("2000")
    long maxPushOperationsPerActor();

    /**
     * Rounds in flight on this pod, every partition together: past it a round is refused, not queued (each round
     * holds its planned response in memory and waits for a pooled connection).
     */
    @WithDefault("256")
    int maxRounds();

    /**
     * Rounds of one partition in flight on this pod that start or resume a bootstrap (§4.7), every actor together
     * ({@code partition_bootstraps}); {@code 0} = off. Four: in docs/BENCHMARKS.md "Noisy neighbour" a tenant's
     * bootstrap storm got as many bootstraps answered with 4 as with 16 at once, and the other tenants' rounds p99
     * 0.5 s instead of 5.7 s.
     */
    @WithDefault("4")
    int maxBootstrapsPerPartition();

    /** Rounds in flight on this pod that start or resume a bootstrap, every partition together; {@code 0} = off. */
    @WithDefault("64")
    int maxBootstraps();

    /**
     * Push operations per second of one partition on this pod, every actor together ({@code
     * partition_push_operations}); a round is admitted while the partition's bucket is above zero and takes its
     * whole cost, so one commit of any size proceeds and the debt is repaid before the next. {@code 0} = off.
     */
    @WithDefault("5000")
    int pushOperationsPerSecondPerPartition();

    /** Pushed bytes (row ids and payloads) per second of one partition on this pod; {@code 0} = off. */
    @WithDefault("16M")
    MemorySize pushBytesPerSecondPerPartition();

    /** Push operations per second of one actor of one partition on this pod; {@code 0} = off. */
    @WithDefault("2000")
    int pushOperationsPerSecondPerActor();

    /** Pushed bytes per second of one actor of one partition on this pod; {@code 0} = off. */
    @WithDefault("8M")
    MemorySize pushBytesPerSecondPerActor();

    /** How much of its rate a push bucket holds: a quiet tenant may push this many seconds' worth at once. */
    @WithDefault("2s")
    Duration pushBurst();

    /**
     * Whether the push rates are each pod's ({@code pod}) or the deployment's ({@code deployment}): each pod then
     * admits its share, the rate divided by the live pods the shared storage knows of.
     */
    @WithDefault("deployment")
    PushRateScope pushRateScope();

    /**
     * How long a round refused by a fairness limit is held before its 429 goes out, at most its own wait (taken
     * from the {@code Retry-After} it is told); {@code 0s} answers at once.
     */
    @WithDefault("1s")
    Duration refusalHold();

    /** {@link #pushRateScope()}. */
    enum PushRateScope {
        POD,
        DEPLOYMENT
    }

    /** The {@code Retry-After} of a refusal (rounded up to whole seconds; {@code details.retryAfterMs}). */
    @WithDefault("1s")
    Duration retryAfter();
}
