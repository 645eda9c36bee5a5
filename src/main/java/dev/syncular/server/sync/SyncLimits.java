package dev.syncular.server.sync;

/**
 * Host-tunable limits of the engine, with the spec's reference defaults where it names one.
 *
 * @param maxOperationsPerRequest    §6.1 operation cap across all commits of a request (default 500)
 * @param inlineSegmentMaxBytes      §5.7 rows segments smaller than this are inlined (default 256 KiB)
 * @param segmentTtlMs               §5.1 segment lifetime (default 24 h)
 * @param maxSubscriptionsPerRequest {@code SUBSCRIPTION} frames one request may carry; more fail the request
 *                                   with {@code sync.invalid_request} before any storage work (default 256)
 * @param maxResponseBytes           §1.4 the round's response budget: once the planned response holds this many
 *                                   bytes, bootstraps stop at the next page and later subscriptions end early
 *                                   with their resume token or cursor (default 8 MiB)
 * @param maxRowBytes                one pushed row's encoded payload at most; a larger one is rejected at push time
 *                                   with {@code sync.constraint_violation} ({@link RowSizeCap}; default 2 MiB)
 * @param maxValueBytes              one pushed value (text as UTF-8, bytes) at most (default 1 MiB)
 */
public record SyncLimits(
        int maxOperationsPerRequest,
        int inlineSegmentMaxBytes,
        long segmentTtlMs,
        int maxSubscriptionsPerRequest,
        long maxResponseBytes,
        long maxRowBytes,
        long maxValueBytes) {
    public static final int DEFAULT_MAX_SUBSCRIPTIONS = 256;
    public static final long DEFAULT_MAX_RESPONSE_BYTES = 8L * 1024 * 1024;
    public static final long DEFAULT_MAX_ROW_BYTES = 2L * 1024 * 1024;
    public static final long DEFAULT_MAX_VALUE_BYTES = 1024L * 1024;
    public static final SyncLimits DEFAULTS = new SyncLimits(500, 256 * 1024, 24L * 60 * 60 * 1000);

    /** The given §6.1 / §5.7 / §5.1 limits with the default subscription cap, response budget and size caps. */
    public SyncLimits(int maxOperationsPerRequest, int inlineSegmentMaxBytes, long segmentTtlMs) {
        this(
                maxOperationsPerRequest,
                inlineSegmentMaxBytes,
                segmentTtlMs,
                DEFAULT_MAX_SUBSCRIPTIONS,
                DEFAULT_MAX_RESPONSE_BYTES,
                DEFAULT_MAX_ROW_BYTES,
                DEFAULT_MAX_VALUE_BYTES);
    }
}
