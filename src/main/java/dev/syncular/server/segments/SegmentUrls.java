package dev.syncular.server.segments;

/**
 * Mints the short-lived URL of a {@code SEGMENT_REF} descriptor (§5.4) for a client advertising
 * {@code accept} bit 3: the native HMAC scheme ({@link SegmentUrlSigner}, bytes served by this host) or a
 * provider presigned GET whose object key embeds the segment id ({@code segments.s3.S3SegmentStore}).
 * Issuance happens inside the pull, right after scope resolution.
 */
@FunctionalInterface
public interface SegmentUrls {
    /** Off: no §5.4 URLs are minted, every segment is fetched through the authenticated route or inline. */
    SegmentUrls NONE = (segmentId, scopeDigest, partition, nowMs) -> null;

    SegmentUrlSigner.SignedUrl issue(String segmentId, String scopeDigest, String partition, long nowMs);
}
