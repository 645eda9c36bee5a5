package dev.syncular.server.config;

import io.quarkus.runtime.configuration.MemorySize;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.Optional;

/**
 * {@code syncular.limits.*}: the request and row limits every binding shares — the §6.1 operation cap, the §5.7
 * inline-segment cap, the §5.1 segment lifetime, the §1.4 response budget, row and value sizes, the pod's buffer
 * budget and the body-arrival bounds — read by the engine's assembly ({@code boot}), {@code memory.BufferBudget} and
 * {@code http.RequestBodies}.
 */
@ConfigMapping(prefix = "syncular.limits")
public interface LimitsConfig {
    /** §6.1 operation cap across all commits of a request. */
    @WithDefault("500")
    int maxOperationsPerRequest();

    /** §5.7 rows segments smaller than this many bytes are inlined into the response. */
    @WithDefault("256K")
    @ByteSize(max = Integer.MAX_VALUE, message = "must be below 2G")
    MemorySize inlineSegmentMaxBytes();

    /** §5.1 segment lifetime. */
    @WithDefault("24h")
    Duration segmentTtl();

    /** {@code SUBSCRIPTION} frames per request; more fail the request with 400 {@code sync.invalid_request}. */
    @WithDefault("256")
    int maxSubscriptionsPerRequest();

    /**
     * §1.4 response budget of one sync round: once the planned response holds this many bytes, bootstraps stop
     * at the next page and later subscriptions end early with their resume token or cursor.
     */
    @WithDefault("8M")
    MemorySize maxResponseBytes();

    /**
     * One pushed row's encoded payload at most: a larger row is rejected at push time with
     * {@code sync.constraint_violation} ({@code details.reason} {@code row_too_large}).
     */
    @WithDefault("2M")
    MemorySize maxRowBytes();

    /**
     * One pushed value at most (text counted as UTF-8): a row with a larger one is rejected at push time with
     * {@code sync.constraint_violation} ({@code value_too_large}, the column in {@code details.fieldPaths}).
     */
    @WithDefault("1M")
    MemorySize maxValueBytes();

    /**
     * The pod-wide budget for bytes buffered on behalf of clients ({@code memory.BufferBudget}): request bodies
     * of the HTTP routes and of socket rounds (§8.7) as they arrive, plus the inflated bytes of gzip bodies
     * (§1.3) and the decoder's buffer for a partial frame. A request that finds it spent is answered 429 {@code sync.rate_limited} with {@code Retry-After}
     * before its body is read. Unset = a quarter of the JVM's maximum heap.
     */
    Optional<MemorySize> bufferBudget();

    /**
     * A request body that brings no byte for this long, or whose average rate since its head falls below
     * {@link #bodyMinRate} once this long has passed, is cut off with 408 {@code sync.invalid_request}.
     */
    @WithDefault("10s")
    Duration bodyTimeout();

    /** Minimum average arrival rate of a request body, in bytes per second; {@code 0} = only the idle cut. */
    @WithDefault("8K")
    MemorySize bodyMinRate();
}
