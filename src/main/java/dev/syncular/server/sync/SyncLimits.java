package dev.syncular.server.sync;

/**
 * Host-tunable limits of the engine, with the spec's reference defaults.
 *
 * @param maxOperationsPerRequest §6.1 operation cap across all commits of a request (default 500)
 * @param inlineSegmentMaxBytes   §5.7 rows segments smaller than this are inlined (default 256 KiB)
 * @param segmentTtlMs            §5.1 segment lifetime (default 24 h)
 */
public record SyncLimits(int maxOperationsPerRequest, int inlineSegmentMaxBytes, long segmentTtlMs) {
    public static final SyncLimits DEFAULTS = new SyncLimits(500, 256 * 1024, 24L * 60 * 60 * 1000);
}
