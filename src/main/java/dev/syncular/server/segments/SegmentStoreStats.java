package dev.syncular.server.segments;

/**
 * What a segment store holds (§5.1), for operators: stored entries and their bytes, and their publications —
 * all of them and the unexpired ones. {@code -1} where the store cannot tell without reading every entry.
 *
 * @param store             the store kind ({@code postgres}, {@code s3}, {@code memory})
 * @param segments          stored entries (content addresses)
 * @param bytes             their total size
 * @param publications      publications recorded, or {@code -1}
 * @param livePublications  publications not expired at the time asked, or {@code -1}
 */
public record SegmentStoreStats(String store, long segments, long bytes, long publications, long livePublications) {}
